package jsonlogic

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCompileErrors(t *testing.T) {
	for _, c := range []struct{ rule, want string }{
		{`{"and":[true,{"matches":[1]}]}`, `filter.and[1]: unknown operator "matches"`},
		{`{"reduce":[[1],{"var":"current"},0]}`, `filter: unknown operator "reduce"`},
		{`{"log":"x"}`, `filter: unknown operator "log"`},
		{`{"==":[1,2,3]}`, `filter: operator "==" takes 2 arguments, got 3`},
		{`{"==":1}`, `filter: operator "==" takes 2 arguments, got 1`},
		{`{"!":[]}`, `filter: operator "!" takes 1 argument, got 0`},
		{`{"!!":[1,2]}`, `filter: operator "!!" takes 1 argument, got 2`},
		{`{"<":[1]}`, `filter: operator "<" takes 2 or 3 arguments, got 1`},
		{`{">":[1,2,3]}`, `filter: operator ">" takes 2 arguments, got 3`},
		{`{"and":[]}`, `filter: operator "and" takes at least 1 argument, got 0`},
		{`{"*":[]}`, `filter: operator "*" takes at least 1 argument, got 0`},
		{`{"var":["a",1,2]}`, `filter: operator "var" takes 0 to 2 arguments, got 3`},
		{`{"some":[[1]]}`, `filter: operator "some" takes 2 arguments, got 1`},
		{`{"missing_some":[1]}`, `filter: operator "missing_some" takes 2 arguments, got 1`},
		{`{"or":[true,{"if":[{"substr":["a"]}]}]}`, `filter.or[1].if[0]: operator "substr" takes 2 or 3 arguments, got 1`},
		{`{"==":[{"var":"a"},1],"!=":[1,2]}`, `filter: a rule must have exactly one key, the operator; this object has "==" and "!="`},
		{`{"var":"a","var":"b"}`, `filter: a rule must have exactly one key, the operator; this object has "var" and "var"`},
		{`{}`, `filter: a rule must have exactly one key, the operator; this object is empty`},
		{`{"or":[{"==":[1,{}]}]}`, `filter.or[0]["=="][1]: a rule must have exactly one key, the operator; this object is empty`},
		{`{"?:":[{"":1}]}`, `filter["?:"][0]: unknown operator ""`},
		{`{"var":{"cat":["a","b"]}}`, `filter.var: a var path must be a constant string or integer, not a rule`},
		{`{"var":[true]}`, `filter.var[0]: a var path must be a constant string or integer, not a boolean`},
		{`{"var":1.5}`, `filter.var: a var path must be a constant string or integer, not the number 1.5`},
		{`{"var":[["a"]]}`, `filter.var[0]: a var path must be a constant string or integer, not an array`},
		{`{"some":[{"var":"xs"},{"var":[[{"var":"y"}]]}]}`, `filter.some[1].var[0]: a var path must be a constant string or integer, not an array`},
		{`{"+":[1e999]}`, `filter["+"][0]: number 1e999 is out of range`},
		{`true false`, `filter: unexpected data after the filter`},
		{`{"==":[1,2]}}`, `filter: unexpected data after the filter`},
		{`{"==": [1]`, `filter: invalid JSON: unexpected end of input`},
		{`{"==": [1,]}`, `filter["=="][1]: invalid JSON at byte 10: invalid character ']' looking for beginning of value`},
		{`{"var" 1}`, `filter.var: invalid JSON at byte 7: invalid character '1' after object key`},
		{`nul`, `filter: invalid JSON: unexpected end of input`},
	} {
		_, err := Compile(json.RawMessage(c.rule))
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Errorf("Compile(%s) = %v, want a *CompileError", c.rule, err)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("Compile(%s):\n got %s\nwant %s", c.rule, err, c.want)
		}
		if err.Error() != ce.Path+": "+ce.Reason {
			t.Errorf("Compile(%s): Error() %q is not Path: Reason", c.rule, err)
		}
	}
}

func TestCompileLimits(t *testing.T) {
	nested := func(n int) string { // n levels of {"!": ...} around true
		return strings.Repeat(`{"!":`, n-1) + "true" + strings.Repeat("}", n-1)
	}
	if _, err := Compile(json.RawMessage(nested(MaxDepth))); err != nil {
		t.Errorf("a filter %d deep: %v", MaxDepth, err)
	}
	_, err := Compile(json.RawMessage(nested(MaxDepth + 1)))
	if want := "filter" + strings.Repeat(`["!"]`, MaxDepth) + ": filter is nested more than 32 deep"; err == nil || err.Error() != want {
		t.Errorf("a filter %d deep: got %v, want %s", MaxDepth+1, err, want)
	}
	// Arrays nest too, and a deep input is refused without reading all of it.
	if _, err := Compile(json.RawMessage(strings.Repeat("[", 30000))); err == nil || !strings.HasSuffix(err.Error(), "nested more than 32 deep") {
		t.Errorf("30000 [s: got %v", err)
	}

	values := func(n int) string { // an array of n-1 elements: n values in all
		return "[" + strings.TrimSuffix(strings.Repeat("1,", n-1), ",") + "]"
	}
	if _, err := Compile(json.RawMessage(values(MaxNodes))); err != nil {
		t.Errorf("%d values: %v", MaxNodes, err)
	}
	if _, err := Compile(json.RawMessage(values(MaxNodes + 1))); err == nil || err.Error() != "filter[999]: filter has more than 1000 values" {
		t.Errorf("%d values: got %v", MaxNodes+1, err)
	}

	big := `{"in":["` + strings.Repeat("x", MaxFilterBytes-14) + `",""]}`
	if len(big) != MaxFilterBytes {
		t.Fatalf("test filter is %d bytes", len(big))
	}
	if _, err := Compile(json.RawMessage(big)); err != nil {
		t.Errorf("a filter of %d bytes: %v", MaxFilterBytes, err)
	}
	big = big[:len(big)-1] + " }"
	if _, err := Compile(json.RawMessage(big)); err == nil || err.Error() != "filter: filter is 65537 bytes long, more than the limit of 65536" {
		t.Errorf("a filter of %d bytes: got %v", len(big), err)
	}
}

func TestNoFilter(t *testing.T) {
	for _, raw := range []string{"", "null", "  null\n", " \t"} {
		f, err := Compile(json.RawMessage(raw))
		if f != nil || err != nil {
			t.Errorf("Compile(%q) = %v, %v; want nil, nil", raw, f, err)
		}
	}
	var f *Filter
	if !f.Match(map[string]any{"type": "x"}) || f.Eval(nil) != true {
		t.Error("a nil filter must match everything")
	}
}

func TestErrorPathNotation(t *testing.T) {
	for key, want := range map[string]string{
		"and": ".and", "missing_some": ".missing_some", "$x1": ".$x1",
		"==": `["=="]`, "?:": `["?:"]`, "1a": `["1a"]`, "": `[""]`, `a"b`: `["a\"b"]`,
	} {
		if got := member(key); got != want {
			t.Errorf("member(%q) = %s, want %s", key, got, want)
		}
	}
}
