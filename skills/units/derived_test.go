package units

import "testing"

func TestDerivedUnits(t *testing.T) {
	u := func(s string) Unit { return MustNew(1, s).Unit }
	for _, c := range []struct {
		conc, time, auc, aumc, k string
	}{
		{"ng/mL", "h", "h.ng/mL", "h2.ng/mL", "1/h"},
		{"ng/ml", "min", "min.ng/mL", "min2.ng/mL", "1/min"},
		{"mg/L", "h", "h.mg/L", "h2.mg/L", "1/h"},
		{"nmol/L", "d", "d.nmol/L", "d2.nmol/L", "1/d"},
	} {
		auc, ok1 := AUCUnit(u(c.conc), u(c.time))
		aumc, ok2 := AUMCUnit(u(c.conc), u(c.time))
		k, ok3 := RateConstantUnit(u(c.time))
		if !ok1 || !ok2 || !ok3 || auc.Symbol != c.auc || aumc.Symbol != c.aumc || k.Symbol != c.k {
			t.Errorf("%s, %s: %v %v %v", c.conc, c.time, auc, aumc, k)
		}
		// The derived unit's size is the product of its parts' sizes.
		want := u(c.time).Factor()
		want.Mul(want, u(c.conc).Factor())
		if auc.Factor().Cmp(want) != 0 {
			t.Errorf("%s is %s of h.mg/L, want %s", auc, auc.Factor(), want)
		}
	}
	if _, ok := AUCUnit(u("h"), u("ng/mL")); ok {
		t.Error("AUCUnit accepted its arguments swapped")
	}
	if _, ok := AUMCUnit(u("mg"), u("h")); ok {
		t.Error("AUMCUnit accepted a mass")
	}
	if _, ok := RateConstantUnit(u("mg")); ok {
		t.Error("RateConstantUnit accepted a mass")
	}
}
