package store

import (
	"encoding/json"
	"testing"

	"github.com/scidex/substrate/internal/problem"
)

func TestApplyPatch(t *testing.T) {
	doc := json.RawMessage(`{"a":1,"tags":["x"],"o":{"b":2}}`)
	good := map[string]string{
		`[{"op":"replace","path":"/a","value":2}]`:                                    `{"a":2,"o":{"b":2},"tags":["x"]}`,
		`[{"op":"add","path":"/tags/-","value":"y"}]`:                                 `{"a":1,"o":{"b":2},"tags":["x","y"]}`,
		`[{"op":"remove","path":"/o/b"}]`:                                             `{"a":1,"o":{},"tags":["x"]}`,
		`[{"op":"test","path":"/a","value":1},{"op":"copy","from":"/a","path":"/c"}]`: `{"a":1,"c":1,"o":{"b":2},"tags":["x"]}`,
		`[]`: `{"a":1,"o":{"b":2},"tags":["x"]}`,
	}
	for patch, want := range good {
		out, err := applyPatch(doc, json.RawMessage(patch))
		if err != nil {
			t.Errorf("%s: %v", patch, err)
			continue
		}
		var got, w any
		_ = json.Unmarshal(out, &got)
		_ = json.Unmarshal([]byte(want), &w)
		if b1, _ := json.Marshal(got); string(b1) != mustMarshal(w) {
			t.Errorf("%s: got %s, want %s", patch, out, want)
		}
	}
	bad := map[string]string{
		`{"op":"add"}`:                                                        "patch",
		`[{"op":"frobnicate","path":"/a"}]`:                                   "patch[0]",
		`[{"op":"replace","path":"/missing","value":1}]`:                      "patch[0]",
		`[{"op":"test","path":"/a","value":2}]`:                               "patch[0]",
		`[{"op":"add","path":"/a","value":1},{"op":"remove","path":"/nope"}]`: "patch[1]",
		`[{"op":"add","path":"a","value":1}]`:                                 "patch[0]",
	}
	for patch, path := range bad {
		_, err := applyPatch(doc, json.RawMessage(patch))
		p, ok := problem.As(err)
		if !ok || p.Code != problem.ValidationFailed || len(p.Details) != 1 || p.Details[0].Path != path {
			t.Errorf("%s: got %v, want a validation problem at %s", patch, err, path)
		}
	}
}

func mustMarshal(v any) string { b, _ := json.Marshal(v); return string(b) }

func FuzzApplyPatch(f *testing.F) {
	f.Add(`{"a":1}`, `[{"op":"replace","path":"/a","value":2}]`)
	f.Add(`{"a":[1,2]}`, `[{"op":"move","from":"/a/0","path":"/b"}]`)
	f.Add(`{}`, `[{"op":"copy","from":"","path":"/x"}]`)
	f.Fuzz(func(t *testing.T, doc, patch string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		out, err := applyPatch(json.RawMessage(doc), json.RawMessage(patch))
		if err != nil {
			if _, ok := problem.As(err); !ok {
				t.Fatalf("non-problem error %v", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("patched document is not JSON: %s", out)
		}
	})
}
