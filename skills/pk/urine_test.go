package pk

import (
	"math"
	"testing"
)

// A mono-exponential IV bolus (C = 10·e^(−0.2t), D = 100 mg, CL = 2 L/h)
// whose renal clearance is 0.6 L/h: each collection's Ae = CLr·∫C dt over
// it. The urine result recovers Ae, fe = Ae/D and CLr = Ae/AUC exactly (log
// trapezoids integrate the exponential exactly).
func TestUrineExcretionAnalytic(t *testing.T) {
	const k, c0, d, clr = 0.2, 10.0, 100.0, 0.6
	ts := []float64{0, 1, 2, 4, 6, 8, 12, 24}
	var cs []float64
	for _, x := range ts {
		cs = append(cs, c0*math.Exp(-k*x))
	}
	area := func(a, b float64) float64 { return c0 / k * (math.Exp(-k*a) - math.Exp(-k*b)) }
	var us []UrineCollection
	wantAe := 0.0
	for _, w := range [][2]float64{{0, 4}, {4, 8}, {8, 12}, {12, 24}} {
		ae := clr * area(w[0], w[1])
		wantAe += ae
		us = append(us, UrineCollection{Start: w[0], End: w[1], Volume: 0.5, Conc: ae / 0.5})
	}
	r, err := NCA(Profile{Times: ts, Conc: cs, Dose: d, Route: RouteIVBolus, Urine: us}, Options{AUCMethod: AUCLinearUpLogDown})
	if err != nil {
		t.Fatal(err)
	}
	u := r.Urine
	if u == nil || len(u.Collections) != 4 {
		t.Fatalf("urine %+v", u)
	}
	for name, g := range map[string][2]float64{"ae": {u.Ae, wantAe}, "fe": {u.Fe, wantAe / d}, "clr": {*u.CLr, clr}, "auc": {*u.AUC, area(0, 24)},
		"rate[0]": {u.Collections[0].Rate, clr * area(0, 4) / 4}, "aeCumulative[3]": {u.Collections[3].AeCum, wantAe}, "midpoint[3]": {u.Collections[3].Midpoint, 18}} {
		if !near(g[0], g[1], 1e-12) {
			t.Errorf("%s = %v, analytic %v", name, g[0], g[1])
		}
	}
	// fe over the collections approaches CLr/CL as the collection covers the profile.
	if !near(u.Fe, clr/(d/(c0/k))*(1-math.Exp(-k*24)), 1e-12) {
		t.Errorf("fe %v", u.Fe)
	}
}
