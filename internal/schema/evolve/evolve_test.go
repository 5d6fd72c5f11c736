package evolve

import (
	"encoding/json"
	"strings"
	"testing"
)

func ops(t *testing.T, s string) []Op {
	t.Helper()
	var o []Op
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestApplyChain(t *testing.T) {
	v2 := ops(t, `[{"op":"rename","from":"/statement","path":"/claim"},{"op":"default","path":"/confidence","value":0.5},{"op":"map","path":"/status","values":{"draft":"proposed"}}]`)
	v3 := ops(t, `[{"op":"remove","path":"/legacy"},{"op":"rename","from":"/meta/a~1b","path":"/meta/ab"},{"op":"default","path":"/missing/x","value":1}]`)
	got, err := Apply(json.RawMessage(`{"statement":"s","status":"draft","legacy":true,"confidence":0.9,"meta":{"a/b":2}}`), []Step{{2, v2}, {3, v3}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(got, &m)
	want := `{"claim":"s","confidence":0.9,"meta":{"ab":2},"status":"proposed"}`
	if b, _ := json.Marshal(m); string(b) != want {
		t.Fatalf("upgraded content = %s, want %s", b, want)
	}
	// A default fills only an absent field; a rename of an absent field does nothing.
	got, _ = Apply(json.RawMessage(`{"status":"open"}`), []Step{{2, v2}})
	if string(got) != `{"confidence":0.5,"status":"open"}` {
		t.Fatalf("got %s", got)
	}
}

func TestCheckRefusesBadOps(t *testing.T) {
	cases := map[string]string{
		`[{"op":"replace","path":"/a"}]`:                            "migrations[0].op",
		`[{"op":"remove","path":"a"}]`:                              "migrations[0].path",
		`[{"op":"remove","path":""}]`:                               "migrations[0].path",
		`[{"op":"remove","path":"/a"},{"op":"rename","path":"/b"}]`: "migrations[1].from",
		`[{"op":"rename","from":"/a","path":"/a/b"}]`:               "migrations[0].path",
		`[{"op":"default","path":"/a"}]`:                            "migrations[0].value",
		`[{"op":"map","path":"/a"}]`:                                "migrations[0].values",
		`[{"op":"remove","path":"/a","value":1}]`:                   "migrations[0].value",
		`[{"op":"remove","path":"/a~2"}]`:                           "migrations[0].path",
	}
	for in, want := range cases {
		ps := Check(ops(t, in))
		if len(ps) == 0 || !strings.HasPrefix(ps[0].Error(), want) {
			t.Errorf("Check(%s) = %v, want a problem at %s", in, ps, want)
		}
	}
	if ps := Check(ops(t, `[{"op":"rename","from":"/a","path":"/b"},{"op":"default","path":"/c","value":null}]`)); len(ps) != 0 {
		t.Errorf("good ops refused: %v", ps)
	}
}

func TestBreaking(t *testing.T) {
	old := json.RawMessage(`{"type":"object","required":["a"],"properties":{"a":{"type":"string"},"b":{"type":"string"},"n":{"type":["string","integer"]},"s":{"type":"string","enum":["x","y","z"]}}}`)
	nw := json.RawMessage(`{"type":"object","required":["a","c"],"properties":{"a":{"type":"string"},"c":{"type":"string"},"n":{"type":"integer"},"s":{"type":"string","enum":["x"]}}}`)
	got := Breaking(old, nw, nil)
	fields := map[string]Break{}
	for _, b := range got {
		fields[b.Field] = b
	}
	for _, f := range []string{"c", "b", "n", "s"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("no break reported for %q: %+v", f, got)
		}
	}
	if !strings.Contains(fields["c"].Suggestion, `"op": "default", "path": "/c"`) || !strings.Contains(fields["s"].Suggestion, `"y": <a remaining value>`) {
		t.Errorf("suggestions: %+v", got)
	}
	cover := ops(t, `[{"op":"rename","from":"/b","path":"/c"},{"op":"remove","path":"/n"},{"op":"map","path":"/s","values":{"y":"x","z":"x"}}]`)
	if got := Breaking(old, nw, cover); len(got) != 0 {
		t.Errorf("covered changes still refused: %+v", got)
	}
	partial := ops(t, `[{"op":"rename","from":"/b","path":"/c"},{"op":"remove","path":"/n"},{"op":"map","path":"/s","values":{"y":"x"}}]`)
	if got := Breaking(old, nw, partial); len(got) != 1 || !strings.Contains(got[0].Message, `"z"`) {
		t.Errorf("a map missing a lost value: %+v", got)
	}
	// Widening is not breaking.
	if got := Breaking(nw, json.RawMessage(`{"type":"object","required":["a"],"properties":{"a":{"type":["string","null"]},"c":{},"n":{"type":"number"},"s":{"type":"string","enum":["x","w"]}}}`), nil); len(got) != 0 {
		t.Errorf("widening refused: %+v", got)
	}
}
