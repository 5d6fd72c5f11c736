package units

import (
	"math/big"
	"strings"
	"testing"
)

// TestGoldenFactors checks conversions against facts written out by hand,
// independent of how the table is built.
func TestGoldenFactors(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     string // exact rational: 1 from = want to
	}{
		{"mg", "ug", "1000"},
		{"g", "mg", "1000"},
		{"kg", "g", "1000"},
		{"ng", "mg", "1/1000000"},
		{"pg", "ng", "1/1000"},
		{"mol", "umol", "1000000"},
		{"nmol", "pmol", "1000"},
		{"L", "mL", "1000"},
		{"l", "ml", "1000"},
		{"dL", "mL", "100"},
		{"mL", "uL", "1000"},
		{"h", "min", "60"},
		{"h", "s", "3600"},
		{"d", "h", "24"},
		{"wk", "min", "10080"}, // 7 x 24 x 60
		{"min", "h", "1/60"},
		{"m2", "cm2", "10000"},
		{"%", "1", "1/100"},
		{"1/min", "1/h", "60"},
		{"/h", "1/d", "24"},
		{"ng/mL", "ug/L", "1"},
		{"ng/mL", "mg/L", "1/1000"},
		{"mg/dL", "mg/L", "10"},
		{"ug/mL", "mg/L", "1"},
		{"g/L", "mg/mL", "1"},
		{"nmol/L", "umol/L", "1/1000"},
		{"mmol/L", "umol/mL", "1"},
		{"mg/kg", "ug/kg", "1000"},
		{"g/kg", "mg/kg", "1000"},
		{"mg/m2", "ug/cm2", "1/10"}, // 1000 ug / 10000 cm2
		{"mg/h", "mg/min", "1/60"},
		{"mg/min", "ug/s", "50/3"}, // 1000 ug / 60 s
		{"L/h", "mL/min", "50/3"},  // 1000 mL / 60 min
		{"mL/min", "L/h", "3/50"},
		{"h.mg/L", "mg.h/L", "1"},
		{"h.ng/mL", "h.mg/L", "1/1000"},
		{"h.ng/mL", "min.ug/L", "60"},
		{"h.mg/L", "min.ug/mL", "60"},
		{"h.nmol/L", "h.umol/L", "1/1000"},
		{"h2.mg/L", "min2.mg/L", "3600"},
		{"d2.ng/mL", "h2.ng/mL", "576"}, // 24^2
		{"mg.h2/L", "h2.mg/L", "1"},
		{"L/kg", "mL/kg", "1000"},
		{"L/h/kg", "mL/min/kg", "50/3"},
		{"mL/kg/min", "L/h/kg", "3/50"},
	} {
		want, _ := new(big.Rat).SetString(c.want)
		got, err := MustNew(1, c.from).To(c.to)
		if err != nil {
			t.Errorf("1 %s to %s: %v", c.from, c.to, err)
			continue
		}
		if got.Exact().Cmp(want) != 0 {
			t.Errorf("1 %s = %s %s, want %s", c.from, got.Exact().RatString(), c.to, c.want)
		}
		wf, _ := want.Float64()
		if got.Value != wf {
			t.Errorf("1 %s = %v %s as a float, want %v", c.from, got.Value, c.to, wf)
		}
	}
}

// TestRoundTripEveryPair converts values between every pair of units of each
// dimension and back: exactly in rationals, and to the same float.
func TestRoundTripEveryPair(t *testing.T) {
	values := []string{"1", "0.1", "2.5", "37", "0.0003", "123456.789", "-4.2"}
	pairs := 0
	for _, d := range Dimensions() {
		us := Units(d)
		if len(us) == 0 {
			t.Errorf("%s has no units", d)
		}
		for _, lit := range values {
			for _, a := range us {
				q, p := ParseQuantity("q", []byte(`{"value":`+lit+`,"unit":"`+a.Symbol+`"}`), d)
				if p != nil {
					t.Fatalf("parse %s %s: %v", lit, a.Symbol, p)
				}
				for _, b := range us {
					pairs++
					there, err := q.To(b.Symbol)
					if err != nil {
						t.Fatalf("%s %s to %s: %v", lit, a.Symbol, b.Symbol, err)
					}
					back, err := there.To(a.Symbol)
					if err != nil {
						t.Fatalf("%s back to %s: %v", b.Symbol, a.Symbol, err)
					}
					if back.Exact().Cmp(q.Exact()) != 0 || back.Value != q.Value {
						t.Fatalf("%s %s -> %s -> %s = %v (%s)", lit, a.Symbol, b.Symbol, a.Symbol, back.Value, back.Exact().RatString())
					}
					// Through the floats alone: New from the printed float.
					f, err := Convert(MustNew(there.Value, b.Symbol), a.Symbol)
					if err != nil {
						t.Fatal(err)
					}
					if !withinOneULP(f, q.Value) {
						t.Fatalf("float round trip %s %s -> %s -> %s = %v", lit, a.Symbol, b.Symbol, a.Symbol, f)
					}
				}
			}
		}
	}
	t.Logf("%d pairs", pairs)
}

// TestExactDecimal: 1 mg to ug and back is exactly 1; 90 min is 1.5 h; a
// chain mg → ug → ng → g → mg of 0.1 comes back 0.1, with no float drift.
func TestExactDecimal(t *testing.T) {
	q := MustNew(1, "mg")
	ug, _ := Convert(q, "ug")
	back, _ := Convert(MustNew(ug, "ug"), "mg")
	if ug != 1000 || back != 1 {
		t.Errorf("1 mg -> %v ug -> %v mg", ug, back)
	}
	h, _ := MustNew(90, "min").In("h")
	if h != 1.5 {
		t.Errorf("90 min = %v h", h)
	}
	p, _ := ParseQuantity("q", []byte(`{"value": 0.1, "unit": "mg"}`))
	for _, s := range []string{"ug", "ng", "g", "kg", "pg", "mg"} {
		var err error
		if p, err = p.To(s); err != nil {
			t.Fatal(err)
		}
	}
	if p.Exact().Cmp(big.NewRat(1, 10)) != 0 || p.Value != 0.1 {
		t.Errorf("0.1 mg through the chain = %v (%s)", p.Value, p.Exact().RatString())
	}
	// 0.1 + 0.2 style drift: 0.3 h in s is exactly 1080.
	s, _ := ParseQuantity("q", []byte(`{"value": 0.3, "unit": "h"}`))
	if v, _ := s.In("s"); v != 1080 {
		t.Errorf("0.3 h = %v s", v)
	}
}

func TestSpellings(t *testing.T) {
	for _, s := range []string{"MG", "Mg", "ML", "H", "HR", "hr", "µg", "μg", "mcg", "Kg", "KG", "mg/ML", "cc", "mg*h/L", "h*mg/L", "mo", "a", "mg/kg/d", ""} {
		if _, ok := Lookup(s); ok {
			t.Errorf("Lookup(%q) found a unit; the whitelist is UCUM case-sensitive", s)
		}
	}
	for _, pair := range [][2]string{{"l", "L"}, {"ml", "mL"}, {"dl", "dL"}, {"ul", "uL"}, {"mg/dl", "mg/dL"}, {"mg.h/L", "h.mg/L"}, {"ng.h/ml", "h.ng/mL"}, {"/h", "1/h"}, {"mg.h2/l", "h2.mg/L"}, {"ml/min", "mL/min"}, {"l/h", "L/h"}, {"ml/kg", "mL/kg"}, {"ml/kg/min", "mL/min/kg"}, {"L/kg/h", "L/h/kg"}} {
		a, okA := Lookup(pair[0])
		b, okB := Lookup(pair[1])
		if !okA || !okB || !a.Equivalent(b) || a.Preferred() != pair[1] || b.Preferred() != pair[1] {
			t.Errorf("%s and %s: found %v %v, equivalent %v, preferred %q %q", pair[0], pair[1], okA, okB, a.Equivalent(b), a.Preferred(), b.Preferred())
		}
		if a == b {
			t.Errorf("%s == %s: Units compare by spelling", pair[0], pair[1])
		}
	}
	if a, b := MustNew(1, "mg").Unit, MustNew(1, "mg/kg").Unit; a.Equivalent(b) {
		t.Error("mg and mg/kg are equivalent")
	}
}

func TestTableInvariants(t *testing.T) {
	for d, s := range canonical {
		u, ok := d.Canonical()
		if !ok || u.Symbol != s || u.Factor().Cmp(big.NewRat(1, 1)) != 0 || u.Dimension != d {
			t.Errorf("canonical unit of %s: %+v", d, u)
		}
		if len(examples[d]) == 0 || examples[d][0] != s {
			t.Errorf("examples of %s should start with %s: %v", d, s, examples[d])
		}
		for _, e := range examples[d] {
			if u, ok := Lookup(e); !ok || u.Dimension != d {
				t.Errorf("example %s of %s is not a unit of it", e, d)
			}
		}
	}
	if len(canonical) != len(dimensions) {
		t.Errorf("%d canonical units for %d dimensions", len(canonical), len(dimensions))
	}
	// The magnitude bounds rely on ratios within a dimension below 1e35.
	for _, d := range Dimensions() {
		us := Units(d)
		lo, hi := us[0].Factor(), us[len(us)-1].Factor()
		ratio, _ := new(big.Rat).Quo(hi, lo).Float64()
		if ratio >= 1e35 {
			t.Errorf("%s spans a ratio of %g (%s to %s)", d, ratio, us[0], us[len(us)-1])
		}
	}
	// Every spelling's preferred form is itself in the table and equivalent.
	for s, u := range table {
		p, ok := Lookup(u.preferred)
		if !ok || !p.Equivalent(u) {
			t.Errorf("%s: preferred %q", s, u.preferred)
		}
		// UCUM's two liters: every L spelling has its l twin.
		if l, ok := Lookup(strings.ReplaceAll(s, "L", "l")); !ok || !l.Equivalent(u) {
			t.Errorf("%s has no spelling with l", s)
		}
		if strings.ContainsAny(s, " *^µμ") {
			t.Errorf("%s is not UCUM", s)
		}
	}
	// No two different units fold to the same lower-cased spelling, so the
	// case suggestions are never ambiguous.
	byFold := map[string]Unit{}
	for s, u := range table {
		k := strings.ToLower(s)
		if v, ok := byFold[k]; ok && !v.Equivalent(u) {
			t.Errorf("%s and %s fold together", s, v.Symbol)
		}
		byFold[k] = u
	}
	if n := len(Symbols(ConcentrationTime)); n != 6*4*5*2*2 {
		t.Errorf("%d concentration-time spellings, want 6 masses x 4 volumes x 5 times x 2 orders x 2 liters", n)
	}
}

func TestConvertRefusals(t *testing.T) {
	q := MustNew(5, "mg")
	for _, c := range []struct{ to, code string }{{"h", CodeIncompatibleUnit}, {"mg/kg", CodeIncompatibleUnit}, {"MG", CodeUnknownUnit}, {"umol", CodeIncompatibleUnit}} {
		_, err := Convert(q, c.to)
		p, ok := err.(*Problem)
		if !ok || p.Code != c.code {
			t.Errorf("5 mg to %s: %v, want %s", c.to, err, c.code)
		}
	}
	if _, err := MustNew(5, "ug/mL").In("nmol/L"); err == nil {
		t.Error("mass concentration converted to molar without a molar mass")
	}
	if _, err := (Quantity{Value: 1}).In("mg"); err == nil {
		t.Error("a quantity with no unit converted")
	}
	if _, err := New(1, "hr"); err == nil {
		t.Error("New accepted hr")
	}
	// Overflow of a computed value is refused, not returned as +Inf.
	if _, err := MustNew(1e300, "kg").In("pg"); err == nil {
		t.Error("1e300 kg in pg did not overflow")
	}
}

func TestStaleExact(t *testing.T) {
	q, _ := ParseQuantity("q", []byte(`{"value": 0.1, "unit": "mg"}`))
	q.Value = 2 // a caller changed it: the rational must not win
	if v, _ := q.In("ug"); v != 2000 {
		t.Errorf("changed value converts to %v", v)
	}
}

func TestMarshalJSON(t *testing.T) {
	q, _ := ParseQuantity("q", []byte(`{"value": 1.5e-7, "unit": "ml"}`))
	b, err := q.MarshalJSON()
	if err != nil || string(b) != `{"value":1.5e-07,"unit":"ml"}` {
		t.Errorf("%s %v", b, err)
	}
	back, p := ParseQuantity("q", b, Volume)
	if p != nil || back.Value != q.Value || back.Unit != q.Unit {
		t.Errorf("read back %v %v", back, p)
	}
	if q.String() != "1.5e-07 ml" {
		t.Errorf("String %q", q.String())
	}
}

func withinOneULP(a, b float64) bool {
	if a == b {
		return true
	}
	d := a - b
	if d < 0 {
		d = -d
	}
	m := b
	if m < 0 {
		m = -m
	}
	return d <= m*0x1p-52
}
