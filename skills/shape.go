package skills

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/skills/units"
)

// The arguments' JSON shape is checked against the Go type a wrapper decodes
// them into before they are decoded, so that a refusal speaks the caller's
// terms. encoding/json's own errors name Go types ("must be float64",
// "must be []struct {…}"), drop the indices from a path (studies.species for
// studies[1].species) and, for an unknown field, give no path at all. Here
// every problem names the full path as the caller wrote it, what was
// received (the JSON at that path), what is wanted ("a number", "a list of
// strings", "an object") and, where one exists, a suggestion: the number
// without its quotes, the string inside a list, the field nearest an
// unknown one.
//
// The walk follows encoding/json's rules where they accept (null leaves a
// field at its zero value; json.RawMessage takes anything, the units layer
// reads it) and refuses where the wrappers' strict decoding refused: an
// unknown field, and a field spelled in another case, which encoding/json
// would accept silently but the input schema (closed objects, exact names)
// refuses.

// shapeProblems checks raw against the type v points to; prefix is where raw
// sits in the arguments ("" for the arguments themselves, "profiles[2]").
func shapeProblems(prefix string, raw json.RawMessage, v any) []runtimes.Problem {
	var ps []runtimes.Problem
	walkShape(&ps, prefix, raw, reflect.TypeOf(v).Elem())
	return ps
}

var (
	rawMessageType  = reflect.TypeOf(json.RawMessage(nil))
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

func walkShape(ps *[]runtimes.Problem, path string, raw json.RawMessage, t reflect.Type) {
	raw = bytes.TrimSpace(raw)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || len(raw) == 0 || string(raw) == "null" || reflect.PointerTo(t).Implements(unmarshalerType) {
		// A type that reads its own JSON (a date) says what it wants itself.
		return
	}
	kind := jsonKind(raw)
	wrong := func(suggestion string) {
		*ps = append(*ps, shapeProblem(path, "type", raw, suggestion, "expected %s, got %s", describeType(t), describeJSON(raw)))
	}
	switch t.Kind() {
	case reflect.String:
		if kind != "string" {
			s := ""
			if kind == "number" || kind == "boolean" {
				s = strconv.Quote(string(raw))
			}
			wrong(s)
		}
	case reflect.Float32, reflect.Float64:
		if kind != "number" {
			wrong(numberInString(raw, false))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if kind == "number" {
			if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
				s := ""
				if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == float64(int64(f)) {
					s = strconv.FormatInt(int64(f), 10)
				}
				wrong(s)
			}
		} else {
			wrong(numberInString(raw, true))
		}
	case reflect.Bool:
		if kind != "boolean" {
			s := ""
			var str string
			if json.Unmarshal(raw, &str) == nil && (str == "true" || str == "false") {
				s = str
			}
			wrong(s)
		}
	case reflect.Slice, reflect.Array:
		if kind != "array" {
			// A single element where a list is wanted: the list of it.
			s := ""
			var probe []runtimes.Problem
			if walkShape(&probe, path, raw, t.Elem()); len(probe) == 0 && kind != "object" && kind != "array" {
				s = "[" + string(raw) + "]"
			}
			wrong(s)
			return
		}
		var elems []json.RawMessage
		_ = json.Unmarshal(raw, &elems)
		for i, e := range elems {
			walkShape(ps, fmt.Sprintf("%s[%d]", path, i), e, t.Elem())
		}
	case reflect.Map:
		if kind != "object" {
			wrong("")
			return
		}
		var m map[string]json.RawMessage
		_ = json.Unmarshal(raw, &m)
		for _, k := range sortedRawKeys(m) {
			walkShape(ps, join(path, k), m[k], t.Elem())
		}
	case reflect.Struct:
		if kind != "object" {
			wrong("")
			return
		}
		var m map[string]json.RawMessage
		_ = json.Unmarshal(raw, &m)
		fields := jsonFields(t)
		names := make([]string, 0, len(fields))
		for n := range fields {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, k := range sortedRawKeys(m) {
			if ft, ok := fields[k]; ok {
				walkShape(ps, join(path, k), m[k], ft)
				continue
			}
			s := units.Nearest(k, names)
			msg := fmt.Sprintf("unknown field %q: expected one of %s", k, strings.Join(names, ", "))
			if s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			*ps = append(*ps, shapeProblem(join(path, k), "unknown_field", m[k], s, "%s", msg))
		}
	}
}

func shapeProblem(path, code string, raw json.RawMessage, suggestion, format string, args ...any) runtimes.Problem {
	p := runtimes.Problem{Path: path, Constraint: code, Message: fmt.Sprintf(format, args...), Suggestion: suggestion}
	if len(raw) > 0 && len(raw) <= maxEchoBytes {
		p.Value = append(json.RawMessage(nil), raw...)
	}
	return p
}

// maxEchoBytes bounds the received value a problem carries back, as the
// units layer bounds its own.
const maxEchoBytes = 200

// numberInString is the number inside a JSON string ("3" → 3), whole when
// whole is set, or "".
func numberInString(raw json.RawMessage, whole bool) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	s = strings.TrimSpace(s)
	if whole {
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return s
		}
		return ""
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && json.Valid([]byte(s)) {
		return s
	}
	return ""
}

// jsonFields are the JSON names of a struct's fields and their types, the
// fields of an embedded struct without a tag promoted as encoding/json
// promotes them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// describeType says what a field wants in a caller's words.
func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		return "a value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list of " + plural(t.Elem())
	case reflect.Struct:
		names := make([]string, 0)
		for n := range jsonFields(t) {
			names = append(names, n)
		}
		sort.Strings(names)
		return "an object (" + strings.Join(names, ", ") + ")"
	default:
		return "an object"
	}
}

func plural(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		return "values"
	}
	switch t.Kind() {
	case reflect.String:
		return "strings"
	case reflect.Float32, reflect.Float64:
		return "numbers"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "whole numbers"
	case reflect.Bool:
		return "booleans"
	case reflect.Slice, reflect.Array:
		return "lists"
	default:
		return "objects"
	}
}

// jsonKind is the kind of a JSON value by its first byte.
func jsonKind(raw json.RawMessage) string {
	switch c := raw[0]; {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	default:
		return "number"
	}
}

// describeJSON says what was received: the string "3", the number 3, a list
// of 2, an object.
func describeJSON(raw json.RawMessage) string {
	switch jsonKind(raw) {
	case "string":
		if len(raw) <= 64 {
			return "the string " + string(raw)
		}
		return "a string"
	case "number":
		return "the number " + string(raw)
	case "boolean":
		return string(raw)
	case "array":
		var elems []json.RawMessage
		_ = json.Unmarshal(raw, &elems)
		return fmt.Sprintf("a list of %d", len(elems))
	default:
		return "an object"
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedRawKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// valueAt is the JSON at path ("studies[1].noael", "times.values[3]") in
// args, or nil when args has nothing there or it is too long to echo.
func valueAt(args json.RawMessage, path string) json.RawMessage {
	cur := bytes.TrimSpace(args)
	for _, seg := range pathSegments(path) {
		if len(cur) == 0 {
			return nil
		}
		if i, err := strconv.Atoi(seg); err == nil && cur[0] == '[' {
			var elems []json.RawMessage
			if json.Unmarshal(cur, &elems) != nil || i < 0 || i >= len(elems) {
				return nil
			}
			cur = bytes.TrimSpace(elems[i])
			continue
		}
		var m map[string]json.RawMessage
		if cur[0] != '{' || json.Unmarshal(cur, &m) != nil {
			return nil
		}
		v, ok := m[seg]
		if !ok {
			return nil
		}
		cur = bytes.TrimSpace(v)
	}
	if len(cur) == 0 || len(cur) > maxEchoBytes {
		return nil
	}
	return append(json.RawMessage(nil), cur...)
}

// pathSegments splits "a.b[2].c" into a, b, 2, c.
func pathSegments(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				out = append(out, part[i:])
				break
			}
			out = append(out, part[i+1:i+j])
			part = part[i+j+1:]
		}
	}
	return out
}
