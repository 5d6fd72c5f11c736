package merge

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	base := "line one\nline two\nline three\nline four\n"
	cases := []struct {
		name, theirs, yours, want string
		ok                        bool
	}{
		{"only theirs", "line one\nLINE TWO\nline three\nline four\n", base, "line one\nLINE TWO\nline three\nline four\n", true},
		{"only yours", base, "line one\nline two\nline three\nLINE FOUR\n", "line one\nline two\nline three\nLINE FOUR\n", true},
		{"different lines", "LINE ONE\nline two\nline three\nline four\n", "line one\nline two\nline three\nLINE FOUR\n",
			"LINE ONE\nline two\nline three\nLINE FOUR\n", true},
		{"both append at different places", "line zero\nline one\nline two\nline three\nline four\n", "line one\nline two\nline three\nline four\nline five\n",
			"line zero\nline one\nline two\nline three\nline four\nline five\n", true},
		{"same edit", "line one\nTWO\nline three\nline four\n", "line one\nTWO\nline three\nline four\n", "line one\nTWO\nline three\nline four\n", true},
		{"same line differently", "line one\nTWO (theirs)\nline three\nline four\n", "line one\nTWO (yours)\nline three\nline four\n", "", false},
		{"adjacent lines conflict", "line one\nTWO\nline three\nline four\n", "line one\nline two\nTHREE\nline four\n", "", false},
		{"no trailing newline", "line one\nline two\nline three\nline four", base, "line one\nline two\nline three\nline four", true},
	}
	for _, c := range cases {
		got, ok := Text(base, c.theirs, c.yours)
		if ok != c.ok {
			t.Errorf("%s: ok=%v, want %v (got %q)", c.name, ok, c.ok, got)
			continue
		}
		if ok && got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
		if !ok && got != c.theirs {
			t.Errorf("%s: on conflict the result should be theirs, got %q", c.name, got)
		}
	}
}

func TestJSON(t *testing.T) {
	rules := Rules{TextFields: []string{"/body"}, AppendOnlyArrays: []string{"/evidence"}}
	cases := []struct {
		name, base, theirs, yours, want string
		conflicts                       []string
	}{
		{"disjoint keys", `{"a":1,"b":1}`, `{"a":2,"b":1}`, `{"a":1,"b":2}`, `{"a":2,"b":2}`, nil},
		{"same key, same value", `{"a":1}`, `{"a":2}`, `{"a":2}`, `{"a":2}`, nil},
		{"same key, different values", `{"a":1,"b":1}`, `{"a":2,"b":1}`, `{"a":3,"b":2}`, `{"a":2,"b":2}`, []string{"/a"}},
		{"nested disjoint", `{"o":{"x":1,"y":1}}`, `{"o":{"x":2,"y":1}}`, `{"o":{"x":1,"y":2}}`, `{"o":{"x":2,"y":2}}`, nil},
		{"added keys", `{}`, `{"a":1}`, `{"b":2}`, `{"a":1,"b":2}`, nil},
		{"both add the same key differently", `{}`, `{"a":1}`, `{"a":2}`, `{"a":1}`, []string{"/a"}},
		{"delete vs edit", `{"a":1,"b":1}`, `{"b":1}`, `{"a":5,"b":1}`, `{"b":1}`, []string{"/a"}},
		{"delete vs untouched", `{"a":1,"b":1}`, `{"b":1}`, `{"a":1,"b":2}`, `{"b":2}`, nil},
		{"numbers equal by value", `{"a":1}`, `{"a":1.0}`, `{"a":2}`, `{"a":2}`, nil},
		{"text lines merge", `{"body":"one\ntwo\nthree\n"}`, `{"body":"ONE\ntwo\nthree\n"}`, `{"body":"one\ntwo\nTHREE\n"}`, `{"body":"ONE\ntwo\nTHREE\n"}`, nil},
		{"text same line", `{"body":"one\ntwo\n"}`, `{"body":"ONE\ntwo\n"}`, `{"body":"uno\ntwo\n"}`, `{"body":"ONE\ntwo\n"}`, []string{"/body"}},
		{"append-only union", `{"evidence":["a"]}`, `{"evidence":["a","b"]}`, `{"evidence":["a","c"]}`, `{"evidence":["a","b","c"]}`, nil},
		{"other arrays are atomic", `{"tags":["a"]}`, `{"tags":["a","b"]}`, `{"tags":["a","c"]}`, `{"tags":["a","b"]}`, []string{"/tags"}},
		{"type change", `{"a":{"x":1}}`, `{"a":"flat"}`, `{"a":{"x":2}}`, `{"a":"flat"}`, []string{"/a"}},
		{"escaped pointer", `{"a/b":1}`, `{"a/b":2}`, `{"a/b":3}`, `{"a/b":2}`, []string{"/a~1b"}},
	}
	for _, c := range cases {
		res, err := JSON(json.RawMessage(c.base), json.RawMessage(c.theirs), json.RawMessage(c.yours), rules)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got, want any
		_ = json.Unmarshal(res.Merged, &got)
		_ = json.Unmarshal([]byte(c.want), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: merged %s, want %s", c.name, res.Merged, c.want)
		}
		if !reflect.DeepEqual(res.Conflicts, c.conflicts) {
			t.Errorf("%s: conflicts %v, want %v", c.name, res.Conflicts, c.conflicts)
		}
		if res.Clean() != (len(c.conflicts) == 0) {
			t.Errorf("%s: Clean() = %v", c.name, res.Clean())
		}
	}
}

func FuzzJSON(f *testing.F) {
	f.Add(`{"a":1}`, `{"a":2}`, `{"b":3}`)
	f.Add(`{"body":"x\ny\n"}`, `{"body":"X\ny\n"}`, `{"body":"x\nY\n"}`)
	f.Add(`{"evidence":[1]}`, `{"evidence":[1,2]}`, `{"evidence":[3]}`)
	f.Add(`[]`, `{}`, `1`)
	rules := Rules{TextFields: []string{"/body"}, AppendOnlyArrays: []string{"/evidence"}}
	f.Fuzz(func(t *testing.T, base, theirs, yours string) {
		if !json.Valid([]byte(base)) || !json.Valid([]byte(theirs)) || !json.Valid([]byte(yours)) {
			if _, err := JSON(json.RawMessage(base), json.RawMessage(theirs), json.RawMessage(yours), rules); err == nil &&
				(!json.Valid([]byte(base)) || !json.Valid([]byte(theirs)) || !json.Valid([]byte(yours))) {
				t.Fatal("invalid JSON accepted")
			}
			return
		}
		res, err := JSON(json.RawMessage(base), json.RawMessage(theirs), json.RawMessage(yours), rules)
		if err != nil {
			t.Fatalf("merge of valid JSON failed: %v", err)
		}
		if !json.Valid(res.Merged) {
			t.Fatalf("merged is not JSON: %s", res.Merged)
		}
		var m, th, yo any
		_ = decode(res.Merged, &m)
		_ = decode(json.RawMessage(theirs), &th)
		_ = decode(json.RawMessage(yours), &yo)
		var b any
		_ = decode(json.RawMessage(base), &b)
		// Nobody changed anything on one side: the merge is the other side.
		if Equal(b, th) && (!Equal(m, yo) || !res.Clean()) {
			t.Fatalf("theirs == base, but merge %s != yours %s (conflicts %v)", res.Merged, yours, res.Conflicts)
		}
		if Equal(b, yo) && (!Equal(m, th) || !res.Clean()) {
			t.Fatalf("yours == base, but merge %s != theirs %s", res.Merged, theirs)
		}
		for _, p := range res.Conflicts {
			if !strings.HasPrefix(p, "/") {
				t.Fatalf("conflict path %q is not a JSON pointer", p)
			}
		}
	})
}
