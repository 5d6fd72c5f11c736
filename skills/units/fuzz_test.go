package units

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

var codes = []string{CodeRequired, CodeNotAQuantity, CodeUnitRequired, CodeUnknownUnit, CodeIncompatibleUnit, CodeNotFinite, CodeOutOfRange}

// FuzzParseQuantity: the parser never panics; what it refuses carries a known
// code and a path under the field's; what it accepts converts to every unit
// of its dimension and back to exactly what was read, and encodes to JSON
// that reads back the same.
func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{
		`{"value": 5, "unit": "mg"}`, `{"value": 0.1, "unit": "ng.h/mL"}`, `{"value": -3e-7, "unit": "1/h"}`,
		`{"value": 1e200, "unit": "kg"}`, `{"value": 1e-200, "unit": "pg"}`, `{"value": 1e999, "unit": "mg"}`,
		`{"value": 5, "unit": "MG"}`, `{"value": 5, "unit": "µg"}`, `{"value": 5, "unit": "hr·µg/mL"}`,
		`5`, `null`, `"5 mg"`, `[1]`, `{"value": 5}`, `{"unit": "h"}`, `{"value": 5, "unit": "mg", "x": 1}`,
		`{"value": 123456789012345678901234567890, "unit": "wk2.kg/uL"}`, `{"value": 0.000000000000000000001e-180, "unit": "s2.pg/L"}`,
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, raw []byte, sel uint8) {
		var want []Dimension
		if sel%2 == 1 {
			want = []Dimension{dimensions[int(sel/2)%len(dimensions)]}
		}
		q, p := ParseQuantity("f", raw, want...)
		if p != nil {
			if !slices.Contains(codes, p.Code) || !strings.HasPrefix(p.Path, "f") || p.Message == "" {
				t.Fatalf("bad problem %+v", p)
			}
			if p.Code == CodeUnknownUnit && p.Suggestion != "" {
				u, ok := Lookup(p.Suggestion)
				if !ok || (len(want) > 0 && u.Dimension != want[0]) {
					t.Fatalf("suggestion %q for %q is not a wanted unit", p.Suggestion, raw)
				}
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		if math.IsNaN(q.Value) || math.IsInf(q.Value, 0) || (q.Value != 0 && (math.Abs(q.Value) > maxMagnitude || math.Abs(q.Value) < minMagnitude)) {
			t.Fatalf("accepted %v", q.Value)
		}
		if len(want) > 0 && q.Unit.Dimension != want[0] {
			t.Fatalf("accepted %s for %s", q.Unit.Symbol, want[0])
		}
		for _, sym := range Symbols(q.Unit.Dimension) {
			there, err := q.To(sym)
			if err != nil || math.IsInf(there.Value, 0) || (q.Value != 0 && there.Value == 0) {
				t.Fatalf("%v %s to %s: %v %v", q.Value, q.Unit.Symbol, sym, there.Value, err)
			}
			back, err := there.To(q.Unit.Symbol)
			if err != nil || back.Exact().Cmp(q.Exact()) != 0 || back.Value != q.Value {
				t.Fatalf("%v %s -> %s -> %v: %v", q.Value, q.Unit.Symbol, sym, back.Value, err)
			}
		}
		b, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		again, p := ParseQuantity("f", b, want...)
		if p != nil || again.Value != q.Value || again.Unit != q.Unit {
			t.Fatalf("%s reads back as %v %v", b, again, p)
		}
	})
}
