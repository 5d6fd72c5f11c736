package jsonlogic

import (
	"math"
	"strconv"
	"strings"
)

// emptyArray is the empty result of missing, missing_some and merge, boxed once.
var emptyArray any = []any{}

// evaluator is the state of one evaluation: the steps taken so far. It lives
// on the evaluating goroutine's stack, which keeps compiled filters immutable
// and safe to share.
type evaluator struct {
	steps int
}

// out reports whether the evaluation has run out of steps; once it has, every
// rule yields null at once so that the evaluation unwinds quickly.
func (e *evaluator) out() bool { return e.steps > MaxSteps }

// cost charges n steps for work about to be done, reporting whether there are
// steps left to do it; if not, the caller skips the work.
func (e *evaluator) cost(n int) bool {
	e.steps += n
	return e.steps <= MaxSteps
}

// eval evaluates n against data.
func (e *evaluator) eval(n *node, data any) any {
	if e.steps++; e.out() {
		return nil
	}
	switch n.op {
	case opConst:
		return n.value
	case opVar:
		e.steps += n.cost
		if v, ok := n.path.lookup(data); ok {
			return v
		}
		if len(n.args) == 2 {
			return e.eval(n.args[1], data)
		}
		return nil
	case opEq:
		return e.looseEqual(e.eval(n.args[0], data), e.eval(n.args[1], data))
	case opNe:
		return !e.looseEqual(e.eval(n.args[0], data), e.eval(n.args[1], data))
	case opStrictEq:
		return e.strictEqual(e.eval(n.args[0], data), e.eval(n.args[1], data))
	case opStrictNe:
		return !e.strictEqual(e.eval(n.args[0], data), e.eval(n.args[1], data))
	case opLt, opLe:
		orEqual := n.op == opLe
		b := e.eval(n.args[1], data)
		if !e.less(e.eval(n.args[0], data), b, orEqual) {
			return false
		}
		return len(n.args) == 2 || e.less(b, e.eval(n.args[2], data), orEqual)
	case opGt:
		return e.less(e.eval(n.args[1], data), e.eval(n.args[0], data), false)
	case opGe:
		return e.less(e.eval(n.args[1], data), e.eval(n.args[0], data), true)
	case opNot:
		return !e.truthy(e.eval(n.args[0], data))
	case opTruthy:
		return e.truthy(e.eval(n.args[0], data))
	case opAnd: // the first falsy value, or the last
		var v any
		for _, a := range n.args {
			if v = e.eval(a, data); !e.truthy(v) {
				break
			}
		}
		return v
	case opOr: // the first truthy value, or the last
		var v any
		for _, a := range n.args {
			if v = e.eval(a, data); e.truthy(v) {
				break
			}
		}
		return v
	case opIf:
		i := 0
		for ; i+1 < len(n.args); i += 2 {
			if e.truthy(e.eval(n.args[i], data)) {
				return e.eval(n.args[i+1], data)
			}
		}
		if i < len(n.args) {
			return e.eval(n.args[i], data)
		}
		return nil
	case opArray:
		a := make([]any, len(n.args))
		for i, arg := range n.args {
			a[i] = e.eval(arg, data)
		}
		return a
	}
	return e.evalMore(n, data)
}

// evalMore evaluates the operators that are less common in filters, keeping
// eval's hot switch small.
func (e *evaluator) evalMore(n *node, data any) any {
	switch n.op {
	case opMissing:
		return e.missing(n, data)
	case opMissingSome:
		return e.missingSome(n, data)
	case opIn:
		return e.in(e.eval(n.args[0], data), e.eval(n.args[1], data))
	case opCat:
		return e.cat(n, data)
	case opSubstr:
		return e.substr(n, data)
	case opAdd:
		sum := 0.0
		for _, a := range n.args {
			sum += e.toFloat(e.eval(a, data))
		}
		return numberResult(sum)
	case opMul:
		product := e.toFloat(e.eval(n.args[0], data))
		for _, a := range n.args[1:] {
			product *= e.toFloat(e.eval(a, data))
		}
		return numberResult(product)
	case opSub:
		x := e.toNumber(e.eval(n.args[0], data))
		if len(n.args) == 1 {
			return numberResult(-x)
		}
		return numberResult(x - e.toNumber(e.eval(n.args[1], data)))
	case opDiv:
		return numberResult(e.toNumber(e.eval(n.args[0], data)) / e.toNumber(e.eval(n.args[1], data)))
	case opMod:
		return numberResult(math.Mod(e.toNumber(e.eval(n.args[0], data)), e.toNumber(e.eval(n.args[1], data))))
	case opMin, opMax:
		return e.minMax(n, data)
	case opMerge:
		return e.merge(n, data)
	case opSome, opAll, opNone, opMap, opFilter:
		return e.iterate(n, data)
	}
	return nil
}

// missing is the keys (the arguments, or the elements of the first argument if
// it is an array) whose var is null, "" or not there.
func (e *evaluator) missing(n *node, data any) any {
	if len(n.args) == 0 {
		return emptyArray
	}
	var out []any
	first := e.eval(n.args[0], data)
	if keys, ok := first.([]any); ok {
		out = e.appendMissing(out, data, keys)
	} else {
		out = e.appendIfMissing(out, data, first)
		for _, a := range n.args[1:] {
			out = e.appendIfMissing(out, data, e.eval(a, data))
		}
	}
	if len(out) == 0 {
		return emptyArray
	}
	return out
}

// missingSome is [] if at least the first argument's number of the keys in the
// second are present, else the missing keys.
func (e *evaluator) missingSome(n *node, data any) any {
	need := e.toNumber(e.eval(n.args[0], data))
	options := e.eval(n.args[1], data)
	var out []any
	total := 1
	if keys, ok := options.([]any); ok {
		total = len(keys)
		if len(keys) > 0 {
			if inner, ok := keys[0].([]any); ok { // as missing does with its first argument
				keys = inner
			}
		}
		out = e.appendMissing(out, data, keys)
	} else {
		out = e.appendIfMissing(out, data, options)
	}
	if float64(total-len(out)) >= need || len(out) == 0 {
		return emptyArray
	}
	return out
}

func (e *evaluator) appendMissing(out []any, data any, keys []any) []any {
	for _, k := range keys {
		if e.steps++; e.out() {
			return out
		}
		out = e.appendIfMissing(out, data, k)
	}
	return out
}

// appendIfMissing appends key to out if {"var": key} is null or "" in data.
func (e *evaluator) appendIfMissing(out []any, data any, key any) []any {
	if v, ok := e.lookupKey(data, key); !ok || v == nil || v == "" {
		out = append(out, key)
	}
	return out
}

// lookupKey is {"var": key} for a key that may be computed: a string path,
// null (the whole data) or anything else as its string form.
func (e *evaluator) lookupKey(data, key any) (any, bool) {
	switch k := key.(type) {
	case string:
		if !e.cost(len(k) >> 7) {
			return nil, false
		}
		return lookupString(data, k)
	case nil:
		return data, true
	}
	if f, ok := e.number(key); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		// A whole number is one step, looked up without building its string.
		switch c := data.(type) {
		case []any:
			if f >= 0 && f < float64(len(c)) {
				return c[int(f)], true
			}
			return nil, false
		case map[string]any:
			var buf [24]byte
			v, ok := c[string(strconv.AppendInt(buf[:0], int64(f), 10))]
			return v, ok
		}
		return nil, false
	}
	e.steps++ // for converting the key
	return lookupString(data, e.toString(key))
}

// in is substring for a string, membership (by ===) for an array, else false.
func (e *evaluator) in(needle, haystack any) any {
	switch h := haystack.(type) {
	case string:
		s := e.toString(needle)
		return h != "" && e.cost(len(h)>>4) && strings.Contains(h, s)
	case []any:
		for _, v := range h {
			if e.steps++; e.out() {
				return false
			}
			if e.strictEqual(needle, v) {
				return true
			}
		}
	}
	return false
}

// cat is its arguments joined as strings, with null as "".
func (e *evaluator) cat(n *node, data any) any {
	if len(n.args) == 1 {
		if v := e.eval(n.args[0], data); v != nil {
			return e.toString(v)
		}
		return ""
	}
	var b []byte
	for _, a := range n.args {
		b = e.appendString(b, e.eval(a, data))
	}
	return string(b)
}

// substr is json-logic-js's substr(source, start[, length]): a negative start
// counts from the end, and a negative length leaves that many characters off
// the end. Positions count code points.
func (e *evaluator) substr(n *node, data any) any {
	s := e.toString(e.eval(n.args[0], data))
	start := e.toNumber(e.eval(n.args[1], data))
	if !e.cost(len(s) >> 4) {
		return nil
	}
	if len(n.args) == 2 {
		return jsSubstr(s, start, math.Inf(1))
	}
	length := e.toNumber(e.eval(n.args[2], data))
	if length < 0 {
		s = jsSubstr(s, start, math.Inf(1))
		return jsSubstr(s, 0, float64(utf8Count(s))+length)
	}
	return jsSubstr(s, start, length)
}

// minMax is Math.min or Math.max of the arguments as numbers.
func (e *evaluator) minMax(n *node, data any) any {
	if len(n.args) == 0 {
		return nil // ±Infinity in JavaScript
	}
	r := e.toNumber(e.eval(n.args[0], data))
	for _, a := range n.args[1:] {
		x := e.toNumber(e.eval(a, data))
		if math.IsNaN(x) || math.IsNaN(r) {
			return nil
		}
		if (n.op == opMin && x < r) || (n.op == opMax && x > r) {
			r = x
		}
	}
	return numberResult(r)
}

// merge is its arguments concatenated, arrays flattened by one level.
func (e *evaluator) merge(n *node, data any) any {
	var out []any
	for _, a := range n.args {
		v := e.eval(a, data)
		if arr, ok := v.([]any); ok {
			if !e.cost(len(arr)) {
				return nil
			}
			out = append(out, arr...)
		} else {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return emptyArray
	}
	return out
}

// iterate evaluates some, all, none, map and filter: the second argument is
// evaluated with each element of the first (an array) as its data.
func (e *evaluator) iterate(n *node, data any) any {
	arr, _ := e.eval(n.args[0], data).([]any)
	logic := n.args[1]
	switch n.op {
	case opSome, opAll, opNone:
		if len(arr) == 0 {
			return n.op == opNone // all of nothing is false, as in json-logic-js
		}
		for _, v := range arr {
			if e.out() {
				return nil
			}
			if t := e.truthy(e.eval(logic, v)); t != (n.op == opAll) {
				return n.op == opSome
			}
		}
		return n.op != opSome
	case opMap:
		out := make([]any, 0, len(arr))
		for _, v := range arr {
			if e.out() {
				return nil
			}
			out = append(out, e.eval(logic, v))
		}
		return out
	}
	out := []any{}
	for _, v := range arr {
		if e.out() {
			return nil
		}
		if e.truthy(e.eval(logic, v)) {
			out = append(out, v)
		}
	}
	return out
}
