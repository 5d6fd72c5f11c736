package jsonlogic

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// envelopeJSON is an event envelope like the ones subscription filters see.
const envelopeJSON = `{
	"id": "42", "type": "hypothesis.created", "occurredAt": "2024-05-01T12:00:00Z", "source": "api",
	"actor": {"id": "u1", "kind": "human"}, "ref": "hyp-1", "schemaVersion": 1,
	"payload": {
		"version": 2, "title": "Tau aggregation", "score": 0.75, "tags": ["neuro", "tau", ""],
		"items": [{"n": 1}, {"n": "2"}, {"n": null}, {}], "empty": [], "obj": {}, "flag": false, "zero": 0,
		"big": 1e300, "neg": -3, "nested": [[1, 2], [3, [4, 5]]], "unicode": "héllo wörld"
	}
}`

const typeAndVar = `{"and":[{"==":[{"var":"type"},"hypothesis.created"]},{">":[{"var":"payload.version"},1]}]}`

// TestConcurrentMatch evaluates one compiled filter from many goroutines on
// shared data (run with -race), and checks that the data is left untouched.
func TestConcurrentMatch(t *testing.T) {
	f := mustCompile(t, `{"and":[
		{"==":[{"var":"type"},"hypothesis.created"]},
		{"some":[{"var":"payload.tags"},{"in":[{"var":""},["tau","amyloid"]]}]},
		{"<":[0.5,{"var":"payload.score"},1]},
		{"!":{"missing":["actor.id","payload.title"]}},
		{"==":[{"cat":[{"substr":[{"var":"payload.title"},0,3]},"!"]},"Tau!"]},
		{"in":["aggreg",{"var":"payload.title"}]},
		{"===":[{"+":[{"var":"payload.version"},{"*":[{"var":"payload.neg"},-1]}]},5]},
		{"merge":[{"map":[{"var":"payload.items"},{"var":"n"}]},{"filter":[[1,0],{"var":""}]}]}
	]}`)
	for _, useNumber := range []bool{false, true} {
		data := decode(t, envelopeJSON, useNumber)
		before := canonical(t, data)
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for g := 0; g < 64; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 500; i++ {
					if !f.Match(data) {
						errs <- "Match = false"
						return
					}
					if v := f.Eval(data); !reflect.DeepEqual(v, []any{1.0, "2", nil, nil, 1.0}) && !useNumber {
						errs <- fmt.Sprintf("Eval = %#v", v)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
		if !reflect.DeepEqual(canonical(t, data), before) {
			t.Fatal("evaluation modified the data")
		}
	}
}

// TestResultsAreNotShared checks that results built by evaluation are fresh:
// modifying one does not change the filter or later results.
func TestResultsAreNotShared(t *testing.T) {
	f := mustCompile(t, `{"merge":[[1,2],{"var":"a"}]}`)
	data := map[string]any{"a": []any{3.0}}
	r := f.Eval(data).([]any)
	r[0], r[2] = "changed", "changed"
	if got := f.Eval(data); !reflect.DeepEqual(got, []any{1.0, 2.0, 3.0}) {
		t.Errorf("second evaluation = %#v", got)
	}
	if !reflect.DeepEqual(data["a"], []any{3.0}) {
		t.Errorf("data changed to %#v", data["a"])
	}
}

// TestStepBudget checks that a filter whose work multiplies (nested iteration
// over literal arrays: 40^4 = 2,560,000 inner evaluations) is cut off, quickly.
func TestStepBudget(t *testing.T) {
	list := "[" + strings.TrimSuffix(strings.Repeat("1,", 40), ",") + "]"
	rule := `{"==":[1,2]}`
	for i := 0; i < 4; i++ {
		rule = `{"some":[` + list + `,` + rule + `]}`
	}
	f := mustCompile(t, `{"!":`+rule+`}`)
	start := time.Now()
	if f.Match(nil) {
		t.Error("an evaluation over budget matched")
	}
	if v := f.Eval(nil); v != nil {
		t.Errorf("an evaluation over budget gave %#v", v)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("two evaluations over budget took %v", d)
	}
	var e evaluator
	e.eval(f.root, nil)
	if e.steps <= MaxSteps || e.steps > MaxSteps+10 { // a few more as the evaluation unwinds
		t.Errorf("evaluation stopped after %d steps", e.steps)
	}

	// Within budget, the same shape completes: 40^2 inner evaluations.
	rule = `{"!":{"some":[` + list + `,{"some":[` + list + `,{"==":[1,2]}]}]}}`
	if f := mustCompile(t, rule); !f.Match(nil) {
		t.Error("a filter within budget did not match")
	}
	// Membership tests and merges are charged per element.
	long := map[string]any{"xs": make([]any, MaxSteps)}
	if f := mustCompile(t, `{"some":[[1,2,3],{"in":[5,{"var":""}]}]}`); f.Match(long) {
		t.Error("bad test")
	}
	if f := mustCompile(t, `{"!":{"in":[5,{"var":"xs"}]}}`); f.Match(long) {
		t.Error("an in over more than MaxSteps elements matched")
	}
	if f := mustCompile(t, `{"!!":{"merge":[{"var":"xs"}]}}`); f.Match(long) {
		t.Error("a merge of more than MaxSteps elements matched")
	}
}

// TestNoAllocations checks that a typical filter evaluates without allocating.
func TestNoAllocations(t *testing.T) {
	for _, rule := range []string{
		typeAndVar,
		`{"or":[{"in":[{"var":"type"},["a.created","hypothesis.created"]]},{"!":{"var":"payload.flag"}}]}`,
		`{"and":[{"<=":[0,{"var":"payload.score"},1]},{"!=":[{"var":"actor.kind"},"bot"]},{"!":{"missing":["payload.title"]}}]}`,
		`{"some":[{"var":"payload.tags"},{"===":[{"var":""},"tau"]}]}`,
	} {
		f := mustCompile(t, rule)
		for _, useNumber := range []bool{false, true} {
			data := decode(t, envelopeJSON, useNumber)
			if !f.Match(data) {
				t.Errorf("%s does not match", rule)
			}
			if n := testing.AllocsPerRun(100, func() { f.Match(data) }); n != 0 {
				t.Errorf("%s (json.Number %v): %v allocations per Match", rule, useNumber, n)
			}
		}
	}
}

// TestMatchSurvivesOddData evaluates filters on Go values that are not decoded
// JSON: they must not panic, and behave as objects.
func TestMatchSurvivesOddData(t *testing.T) {
	type odd struct{ A int }
	data := map[string]any{"s": odd{1}, "p": &odd{2}, "f": func() {}, "m": map[string]string{"a": "b"}, "n": int32(5)}
	for _, c := range []struct {
		rule string
		want bool
	}{
		{`{"==":[{"var":"s"},"[object Object]"]}`, true},
		{`{"var":"m.a"}`, false},
		{`{"<":[{"var":"f"},1]}`, false},
		{`{"cat":[{"var":"p"},{"var":"n"}]}`, true},
		{`{"==":[{"var":"n"},"5"]}`, true},
		{`{"in":[{"var":"s"},[{"var":"s"}]]}`, false},
	} {
		if got := mustCompile(t, c.rule).Match(data); got != c.want {
			t.Errorf("%s: Match = %v, want %v", c.rule, got, c.want)
		}
	}
}

func ExampleFilter_Match() {
	f, err := Compile(json.RawMessage(`{"and":[{"==":[{"var":"type"},"hypothesis.created"]},{">":[{"var":"payload.version"},1]}]}`))
	if err != nil {
		panic(err)
	}
	var envelope any
	_ = json.Unmarshal([]byte(`{"type":"hypothesis.created","payload":{"version":2}}`), &envelope)
	fmt.Println(f.Match(envelope))

	_, err = Compile(json.RawMessage(`{"and":[true,{"matches":["type","hyp.*"]}]}`))
	fmt.Println(err)
	// Output:
	// true
	// filter.and[1]: unknown operator "matches"
}
