package jsonlogic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// compiler turns a filter's JSON into nodes straight from the token stream, so
// that limits are enforced while reading and nothing deeper than MaxDepth is
// ever built.
type compiler struct {
	dec   *json.Decoder
	nodes int
}

// compile compiles one JSON value, which must be all of src.
func compile(src []byte) (*node, error) {
	c := compiler{dec: json.NewDecoder(bytes.NewReader(src))}
	c.dec.UseNumber()
	tok, err := c.token(rootPath)
	if err != nil {
		return nil, err
	}
	root, err := c.value(tok, rootPath, 1)
	if err != nil {
		return nil, err
	}
	if _, err := c.dec.Token(); err != io.EOF {
		return nil, errorf(rootPath, "unexpected data after the filter")
	}
	return root, nil
}

func errorf(path, format string, args ...any) *CompileError {
	return &CompileError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// token reads the next token, reporting bad JSON at path.
func (c *compiler) token(path string) (json.Token, error) {
	tok, err := c.dec.Token()
	if err == nil {
		return tok, nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errorf(path, "invalid JSON: unexpected end of input")
	}
	return nil, errorf(path, "invalid JSON at byte %d: %v", c.dec.InputOffset(), err)
}

// value compiles the value that starts with tok, found at path and depth.
func (c *compiler) value(tok json.Token, path string, depth int) (*node, error) {
	if depth > MaxDepth {
		return nil, errorf(path, "filter is nested more than %d deep", MaxDepth)
	}
	if c.nodes++; c.nodes > MaxNodes {
		return nil, errorf(path, "filter has more than %d values", MaxNodes)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			return c.array(path, depth)
		case '{':
			return c.rule(path, depth)
		}
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, errorf(path, "number %s is out of range", t)
		}
		return constant(f), nil
	case string, bool, nil:
		return constant(t), nil
	}
	return nil, errorf(path, "invalid JSON: unexpected %v", tok)
}

// array compiles an array literal, whose '[' has been read. An array of
// literals becomes one constant, built once.
func (c *compiler) array(path string, depth int) (*node, error) {
	elems, err := c.elements(path, depth)
	if err != nil {
		return nil, err
	}
	values := make([]any, len(elems))
	for i, e := range elems {
		if e.op != opConst {
			return &node{op: opArray, args: elems}, nil
		}
		values[i] = e.value
	}
	return constant(values), nil
}

// elements compiles the elements of an array whose '[' has been read, and its ']'.
func (c *compiler) elements(path string, depth int) ([]*node, error) {
	var elems []*node
	for c.dec.More() {
		at := fmt.Sprintf("%s[%d]", path, len(elems))
		tok, err := c.token(at)
		if err != nil {
			return nil, err
		}
		e, err := c.value(tok, at, depth+1)
		if err != nil {
			return nil, err
		}
		elems = append(elems, e)
	}
	if _, err := c.token(path); err != nil { // the ']'
		return nil, err
	}
	return elems, nil
}

// rule compiles an object, whose '{' has been read: a rule, with exactly one
// key, the operator, whose value is its argument or array of arguments.
func (c *compiler) rule(path string, depth int) (*node, error) {
	if !c.dec.More() {
		if _, err := c.token(path); err != nil {
			return nil, err
		}
		return nil, errorf(path, "a rule must have exactly one key, the operator; this object is empty")
	}
	tok, err := c.token(path)
	if err != nil {
		return nil, err
	}
	name, _ := tok.(string)
	op, ok := operators[name]
	if !ok {
		return nil, errorf(path, "unknown operator %q", name)
	}
	argsPath := path + member(name)
	if tok, err = c.token(argsPath); err != nil {
		return nil, err
	}
	var args []*node
	bare := tok != json.Delim('[') // {"var": "a"} is sugar for {"var": ["a"]}
	if bare {
		arg, err := c.value(tok, argsPath, depth+1)
		if err != nil {
			return nil, err
		}
		args = []*node{arg}
	} else if args, err = c.elements(argsPath, depth); err != nil {
		return nil, err
	}
	if c.dec.More() {
		tok, err := c.token(path)
		if err != nil {
			return nil, err
		}
		return nil, errorf(path, "a rule must have exactly one key, the operator; this object has %q and %q", name, tok)
	}
	if _, err := c.token(path); err != nil { // the '}'
		return nil, err
	}
	if n := len(args); n < op.min || (op.max >= 0 && n > op.max) {
		return nil, errorf(path, "operator %q takes %s, got %d", name, arity(op), n)
	}
	n := &node{op: op.code, args: args}
	if op.code == opVar && len(args) > 0 {
		at := argsPath
		if !bare {
			at += "[0]"
		}
		if n.path, err = varPath(args[0], at); err != nil {
			return nil, err
		}
		if s, ok := args[0].value.(string); ok {
			n.cost = len(s) >> 7
		}
	}
	return n, nil
}

// varPath is the path a var rule's first argument names; it must be a
// constant string, integer or null.
func varPath(arg *node, at string) (path, error) {
	if arg.op == opConst {
		switch v := arg.value.(type) {
		case nil:
			return nil, nil
		case string:
			return parsePath(v), nil
		case float64:
			if v == math.Trunc(v) {
				return parsePath(formatNumber(v)), nil
			}
		}
	}
	return nil, errorf(at, "a var path must be a constant string or integer, not %s", describe(arg))
}

// describe names what a node is, for error messages.
func describe(n *node) string {
	switch n.op {
	case opConst:
		switch v := n.value.(type) {
		case bool:
			return "a boolean"
		case float64:
			return "the number " + formatNumber(v)
		case []any:
			return "an array"
		}
	case opArray:
		return "an array"
	}
	return "a rule"
}

// arity describes how many arguments an operator takes.
func arity(op operator) string {
	plural := func(n int) string {
		if n == 1 {
			return "1 argument"
		}
		return strconv.Itoa(n) + " arguments"
	}
	switch {
	case op.max < 0:
		return "at least " + plural(op.min)
	case op.min == op.max:
		return plural(op.min)
	case op.max == op.min+1:
		return fmt.Sprintf("%d or %s", op.min, plural(op.max))
	}
	return fmt.Sprintf("%d to %s", op.min, plural(op.max))
}

// member is how a key is appended to a path: .name for identifiers, ["key"] otherwise.
func member(key string) string {
	ident := key != ""
	for i, r := range key {
		if !(r == '_' || r == '$' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			ident = false
			break
		}
	}
	if ident {
		return "." + key
	}
	return "[" + strconv.Quote(key) + "]"
}

// constant is a node for a literal value, boxed once here.
func constant(v any) *node { return &node{op: opConst, value: v} }
