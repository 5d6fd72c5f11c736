package jsonlogic

import "strings"

// segment is one dot-separated step of a var path.
type segment struct {
	key   string
	index int // key as an array index, or -1 if it is not one
}

// path is a parsed var path; an empty path is the whole data.
type path []segment

// parsePath splits a var path at its dots; "" is the whole data.
func parsePath(s string) path {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ".")
	p := make(path, len(parts))
	for i, k := range parts {
		p[i] = segment{key: k, index: arrayIndex(k)}
	}
	return p
}

// lookup walks the path from data, reporting false if some step is not there:
// a missing key, an index out of range, or a step into something that is not
// an object or array (null included).
func (p path) lookup(data any) (any, bool) {
	for _, s := range p {
		var ok bool
		if data, ok = step(data, s.key, s.index); !ok {
			return nil, false
		}
	}
	return data, true
}

// lookupString walks a path given as a string (as missing's keys are, which may
// be computed), without allocating.
func lookupString(data any, p string) (any, bool) {
	if p == "" {
		return data, true
	}
	for {
		k, rest, more := strings.Cut(p, ".")
		var ok bool
		if data, ok = step(data, k, -2); !ok {
			return nil, false
		}
		if !more {
			return data, true
		}
		p = rest
	}
}

// step takes one step into data; index is key parsed as an array index, -1 if
// it is not one, or -2 if it has not been parsed yet.
func step(data any, key string, index int) (any, bool) {
	switch c := data.(type) {
	case map[string]any:
		v, ok := c[key]
		return v, ok
	case []any:
		if index == -2 {
			index = arrayIndex(key)
		}
		if index < 0 || index >= len(c) {
			return nil, false
		}
		return c[index], true
	}
	return nil, false
}

// arrayIndex is s as an array index: canonical decimal digits, as JavaScript
// requires ("1" is an index, "01" and "+1" are not), or -1.
func arrayIndex(s string) int {
	if s == "" || len(s) > 9 || (s[0] == '0' && len(s) > 1) {
		return -1
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}
