package jsonlogic

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// hostileFilters are filters built to cost as much as possible: work that
// multiplies through nested iteration, long strings and numbers converted over
// and over, and large arrays joined, searched and merged repeatedly.
func hostileFilters() map[string]string {
	big := strings.Repeat("x", 60000)
	list := "[" + strings.TrimSuffix(strings.Repeat("1,", 100), ",") + "]"
	twice := func(inner string) string { // inner, evaluated 100 × 100 times
		return `{"some":[` + list + `,{"some":[` + list + `,` + inner + `]}]}`
	}
	dupOf := func(path, inner string) string { // inner, evaluated on each of 200 references to a value in the data
		return `{"some":[{"merge":[` + strings.TrimSuffix(strings.Repeat(`[{"var":"`+path+`"}],`, 200), ",") + `]},` + inner + `]}`
	}
	dup := func(inner string) string { return dupOf("big", inner) }
	nested := `{"==":[{"var":""},2]}`
	for i := 0; i < 4; i++ {
		nested = `{"some":[` + list + `,` + nested + `]}`
	}
	return map[string]string{
		"nested iteration":    nested,
		"join to compare":     twice(`{"==":[{"map":[` + list + `,"` + big[:500] + `"]},"x"]}`),
		"substring search":    twice(`{"in":["y","` + big + `"]}`),
		"long string compare": twice(`{"!=":["` + big[:30000] + `","` + big[:30000] + `"]}`),
		"long var path":       twice(`{"var":"` + big + `"}`),
		"long number string":  twice(`{"<":["` + strings.Repeat("1", 60000) + `",1]}`),
		"parseFloat":          twice(`{"+":["` + strings.Repeat("1", 60000) + `"]}`),
		"long json.Number":    dupOf("num", `{"<":[{"var":""},1]}`),
		"substr":              twice(`{"!":{"substr":["` + big + `",1,1]}}`),
		"compare big arrays":  dup(`{"==":[{"var":""},1]}`),
		"cat big arrays":      dup(`{"!":{"cat":[{"var":""}]}}`),
		"missing from arrays": dup(`{"missing":{"var":""}}`),
		"in big arrays":       dup(`{"in":[-1,{"var":""}]}`),
		"merge big arrays":    dup(`{"!":{"merge":[{"var":""},{"var":""}]}}`),
	}
}

// hostileData has a 200,000-element array and a 50,000-digit number.
func hostileData() map[string]any {
	arr := make([]any, 200000)
	for i := range arr {
		arr[i] = float64(i)
	}
	return map[string]any{"big": arr, "num": json.Number(strings.Repeat("9", 50000))}
}

// TestHostileFiltersAreBounded checks that each hostile filter is cut off by
// the step budget rather than running for long (the bound on time is loose,
// for slow and busy machines; see BenchmarkMatchHostile for real figures).
func TestHostileFiltersAreBounded(t *testing.T) {
	data := hostileData()
	for name, rule := range hostileFilters() {
		f := mustCompile(t, rule)
		start := time.Now()
		f.Match(data)
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", name, d)
		}
		var e evaluator
		e.eval(f.root, data)
		if !e.out() {
			t.Errorf("%s: finished within budget, in %d steps", name, e.steps)
		}
	}
}

// BenchmarkMatchHostile measures the worst an evaluation can cost.
func BenchmarkMatchHostile(b *testing.B) {
	data := hostileData()
	for name, rule := range hostileFilters() {
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			f := mustCompile(b, rule)
			b.ReportAllocs()
			for b.Loop() {
				f.Match(data)
			}
		})
	}
}
