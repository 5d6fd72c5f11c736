package jsonlogic

import (
	"encoding/json"
	"testing"
)

// BenchmarkMatchTypeAndVar is the common subscription filter (an event type
// and a payload field) against an envelope decoded with json.Unmarshal.
func BenchmarkMatchTypeAndVar(b *testing.B) {
	benchmarkMatch(b, typeAndVar, false)
}

// BenchmarkMatchTypeAndVarJSONNumber is the same with the envelope's numbers
// decoded as json.Number.
func BenchmarkMatchTypeAndVarJSONNumber(b *testing.B) {
	benchmarkMatch(b, typeAndVar, true)
}

// BenchmarkMatchSomeTags iterates over an array in the payload.
func BenchmarkMatchSomeTags(b *testing.B) {
	benchmarkMatch(b, `{"some":[{"var":"payload.tags"},{"in":[{"var":""},["tau","amyloid"]]}]}`, false)
}

func benchmarkMatch(b *testing.B, rule string, useNumber bool) {
	f := mustCompile(b, rule)
	data := decode(b, envelopeJSON, useNumber)
	want := f.Match(data)
	b.ReportAllocs()
	for b.Loop() {
		if f.Match(data) != want {
			b.Fatal("unstable result")
		}
	}
}

// BenchmarkCompile is the one-off cost of compiling a filter at subscribe time.
func BenchmarkCompile(b *testing.B) {
	raw := json.RawMessage(typeAndVar)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(raw); err != nil {
			b.Fatal(err)
		}
	}
}
