package jsonlogic

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fuzzSeeds are rules to start from: every operator, and some odd corners.
var fuzzSeeds = []string{
	typeAndVar,
	`{"var":["payload.items.1.n",{"cat":["x",{"var":"id"}]}]}`,
	`{"missing":["payload.title","payload.nope",{"var":"source"}]}`,
	`{"missing_some":[2,["payload.a","payload.score","actor.id"]]}`,
	`{"if":[{"==":[{"var":"payload.zero"},false]},{"!=":[null,0]},{"===":[1,1]},{"!==":[1,"1"]},null]}`,
	`{"?:":[{"<":[1,{"var":"payload.score"},2]},{"<=":[0,0,0]},{">=":["b","a"]}]}`,
	`{"or":[{"!":[{"var":"payload.flag"}]},{"!!":[{"var":"payload.empty"}]}]}`,
	`{"in":["tau",{"var":"payload.tags"}]}`,
	`{"in":["agg",{"var":"payload.title"}]}`,
	`{"cat":[{"var":"payload.nested"},{"var":"payload.obj"},{"var":"payload.big"}]}`,
	`{"substr":[{"var":"payload.unicode"},-5,-2]}`,
	`{"+":[{"*":[{"var":"payload.version"},"3px"]},{"-":[{"var":"payload.neg"}]},{"/":[1,{"var":"payload.zero"}]},{"%":[7,3]}]}`,
	`{"min":[{"max":[1,"2",[3]]},{"var":"payload.score"}]}`,
	`{"some":[{"var":"payload.items"},{"==":[{"var":"n"},2]}]}`,
	`{"all":[{"var":"payload.nested"},{"some":[{"var":""},{">":[{"var":""},3]}]}]}`,
	`{"none":[{"merge":[{"var":"payload.tags"},[1,[2]]]},{"===":[{"var":""},2]}]}`,
	`{"map":[{"filter":[{"var":"payload.items"},{"var":"n"}]},{"+":[{"var":"n"},1]}]}`,
	`[1,"a",null,true,{"var":"type"},[]]`,
	`{"==":[[],{"var":"payload.empty"}]}`,
	`{"var":1}`, `null`, `{}`, `{"a":1,"b":2}`, `{"and":[]}`, `{"unknown":[]}`, `[[[[[[[[[[1]]]]]]]]]]`,
}

// FuzzCompileEval compiles arbitrary input and evaluates whatever compiles
// against a fixed envelope: compiling and evaluating never panic or hang, a
// refusal is a *CompileError, Match agrees with the truthiness of Eval, and
// the data is never modified.
func FuzzCompileEval(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	envelopes := []any{decode(f, envelopeJSON, false), decode(f, envelopeJSON, true)}
	want, err := json.Marshal(envelopes)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		filter, err := Compile(raw)
		if err != nil {
			var ce *CompileError
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.Path, rootPath) || ce.Reason == "" {
				t.Fatalf("Compile(%q) = %#v, want a *CompileError with a path and a reason", raw, err)
			}
			return
		}
		if filter == nil {
			if trimmed := bytes.Trim(raw, " \t\r\n"); len(trimmed) != 0 && string(trimmed) != "null" {
				t.Fatalf("Compile(%q) gave no filter and no error", raw)
			}
			return
		}
		for _, env := range envelopes {
			start := time.Now()
			v, done := filter.evaluate(env) // no recover: a panic fails the fuzz run
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("%q took %v", raw, d)
			}
			if !done {
				v = nil
			}
			if m := filter.Match(env); m != (done && truthy(v)) {
				t.Fatalf("%q: Match = %v, but Eval = %#v (finished %v)", raw, m, v, done)
			}
			if e := filter.Eval(env); !reflect.DeepEqual(e, v) {
				t.Fatalf("%q: Eval = %#v, then %#v", raw, v, e)
			}
		}
		if got, _ := json.Marshal(envelopes); !bytes.Equal(got, want) {
			t.Fatalf("%q modified the data", raw)
		}
	})
}
