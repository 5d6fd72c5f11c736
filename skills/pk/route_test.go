package pk

import (
	"math"
	"testing"
)

// A one-compartment drug infused over 2 h (D = 100 mg, V = 10 L, k = 0.2/h):
// C = R0/(kV)·(1 − e^(−kt)) during the infusion, C(T)·e^(−k(t−T)) after. The
// infusion-aware parameters agree with the analytic solution: AUCinf = D/(kV),
// CL = kV, MRT = AUMC/AUC − T/2 = 1/k, Vss = MRT·CL = V, Vz = V. The rising
// limb's linear trapezoids are the only approximation (measured < 1e-4).
func TestInfusionAnalytic(t *testing.T) {
	const d, v, k, dur = 100.0, 10.0, 0.2, 2.0
	r0 := d / dur
	conc := func(x float64) float64 {
		if x <= dur {
			return r0 / (k * v) * (1 - math.Exp(-k*x))
		}
		return r0 / (k * v) * (1 - math.Exp(-k*dur)) * math.Exp(-k*(x-dur))
	}
	var ts, cs []float64
	for i := 0; i <= 40; i++ { // every 0.05 h through the infusion
		ts = append(ts, float64(i)/20)
	}
	ts = append(ts, 3, 4, 6, 8, 12, 16, 24)
	for _, x := range ts {
		cs = append(cs, conc(x))
	}
	p := Profile{Times: ts, Conc: cs, Dose: d, Route: RouteIVInfusion, Duration: ptr(dur)}
	r, err := NCA(p, Options{AUCMethod: AUCLinearUpLogDown})
	if err != nil {
		t.Fatal(err)
	}
	if r.Terminal == nil || !near(r.Terminal.LambdaZ, k, 1e-12) || r.Terminal.Times[0] < dur {
		t.Fatalf("λz %+v, want %v after the infusion", r.Terminal, k)
	}
	worst := 0.0
	for name, g := range map[string][2]float64{
		"aucinfObs": {*r.AUCinfObs, d / (k * v)}, "clObs": {*r.CLObs, k * v}, "mrtinfObs": {*r.MRTinfObs, 1 / k},
		"vssObs": {*r.VssObs, v}, "vzObs": {*r.VzObs, v},
	} {
		if !near(g[0], g[1], 1e-3) {
			t.Errorf("%s = %v, analytic %v", name, g[0], g[1])
		}
		worst = math.Max(worst, relDiff(g[0], g[1]))
	}
	if r.CLName != "CL" || r.Tlag != nil || r.Duration == nil || *r.Duration != dur || !hasNote(r.Imputations, NoteC0Observed) {
		t.Errorf("names %q tlag %v duration %v notes %v", r.CLName, r.Tlag, r.Duration, r.Imputations)
	}
	// MRTlast subtracts the half duration too.
	if !near(*r.MRTlast, r.AUMClast/r.AUClast-dur/2, 1e-12) {
		t.Errorf("MRTlast %v", *r.MRTlast)
	}
	t.Logf("largest relative difference from the analytic infusion: %.3g", worst)
}

// An IV bolus mono-exponential C = 10·e^(−0.2t) without a t = 0 sample: C0
// is back-extrapolated to 10 exactly, and Vss = MRT·CL = D/C0 = V exactly.
func TestIVBolusVss(t *testing.T) {
	ts := []float64{0.5, 1, 2, 4, 6, 8, 12, 24}
	var cs []float64
	for _, x := range ts {
		cs = append(cs, 10*math.Exp(-0.2*x))
	}
	r, err := NCA(Profile{Times: ts, Conc: cs, Dose: 100, Route: RouteIVBolus}, Options{AUCMethod: AUCLinearUpLogDown})
	if err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string][2]float64{"c0": {r.C0, 10}, "mrtinfObs": {*r.MRTinfObs, 5}, "vssObs": {*r.VssObs, 10}, "vssPred": {*r.VssPred, 10}, "clObs": {*r.CLObs, 2}} {
		if !near(g[0], g[1], 1e-9) {
			t.Errorf("%s = %v, analytic %v", name, g[0], g[1])
		}
	}
	if r.Tlag != nil {
		t.Errorf("an IV bolus has no Tlag: %v", *r.Tlag)
	}
	// Extravascular gives no Vss.
	p := theophProfiles(t)[0]
	if re, _ := NCA(p, Options{AUCMethod: AUCLinear}); re.VssObs != nil {
		t.Errorf("extravascular Vss %v, want null", *re.VssObs)
	}
}
