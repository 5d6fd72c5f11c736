package pk

import (
	"math"
	"testing"
)

// batemanSum is the one-compartment oral model after doses of d mg at each of
// doses (F = 1, volume v L, absorption ka and elimination k, 1/h), by
// superposition; batemanArea is its exact integral from a to b.
func batemanSum(t float64, doses []float64, d, v, ka, k float64) float64 {
	c := 0.0
	for _, td := range doses {
		if s := t - td; s >= 0 {
			c += d * ka / (v * (ka - k)) * (math.Exp(-k*s) - math.Exp(-ka*s))
		}
	}
	return c
}

func batemanArea(a, b float64, doses []float64, d, v, ka, k float64) float64 {
	total := 0.0
	for _, td := range doses {
		lo := math.Max(a, td)
		if b <= lo {
			continue
		}
		A := d * ka / (v * (ka - k))
		total += A * ((math.Exp(-k*(lo-td))-math.Exp(-k*(b-td)))/k - (math.Exp(-ka*(lo-td))-math.Exp(-ka*(b-td)))/ka)
	}
	return total
}

// Ten oral doses every 12 h of a one-compartment drug, sampled every 0.1 h
// to 72 h after the last: each interval's AUCtau, Cmin, Ctau, Cavg,
// fluctuation, swing and CLss/F agree with the superposed Bateman function,
// the last interval with the analytic steady state (AUCtau = Dose/CL), and the
// accumulation index with 1/(1 − e^(−k·tau)). The AUCs differ from the exact
// integrals only by the trapezoids on the rising limbs (measured 2.5e-4).
func TestSteadyStateBatemanSuperposition(t *testing.T) {
	const d, v, ka, k, tau = 100.0, 20.0, 1.5, 0.15, 12.0
	var doses []float64
	for i := 0; i < 10; i++ {
		doses = append(doses, float64(i)*tau)
	}
	var ts, cs []float64
	for i := 0; i <= 1800; i++ {
		x := float64(i) / 10
		ts = append(ts, x)
		cs = append(cs, batemanSum(x, doses, d, v, ka, k))
	}
	p := Profile{Times: ts, Conc: cs, Dose: d, Route: RouteExtravascular, Tau: ptr(tau), DoseTimes: doses}
	// The last 100 samples (from 170.1 h, 62 h after the last dose) are
	// mono-exponential to machine precision, so λz = k.
	r, err := NCA(p, Options{AUCMethod: AUCLinearUpLogDown, LambdaZPoints: iptr(100)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Terminal == nil || !near(r.Terminal.LambdaZ, k, 1e-9) {
		t.Fatalf("λz after the last dose: %v, want k = %v", r.Terminal.LambdaZ, k)
	}
	// The best-fit rule also looks only after the last dose's peak.
	if rb, _ := NCA(p, Options{AUCMethod: AUCLinearUpLogDown}); rb.Terminal == nil || rb.Terminal.Times[0] <= 108 || !near(rb.Terminal.LambdaZ, k, 1e-3) {
		t.Errorf("best fit after several doses: %+v", rb.Terminal)
	}
	if len(r.Intervals) != 10 {
		t.Fatalf("%d intervals, want 10", len(r.Intervals))
	}
	worst := map[string]float64{}
	check := func(name string, got *float64, want, tol float64) {
		t.Helper()
		if got == nil || !near(*got, want, tol) {
			if got == nil {
				t.Errorf("%s is null, analytic %v", name, want)
			} else {
				t.Errorf("%s = %v, analytic %v (relative difference %.3g)", name, *got, want, relDiff(*got, want))
			}
			return
		}
		worst[name] = math.Max(worst[name], relDiff(*got, want))
	}
	for i, iv := range r.Intervals {
		a, b := doses[i], doses[i]+tau
		if iv.Start != a || iv.End != b || iv.Tau != tau || iv.Extrapolated {
			t.Errorf("interval %d: %+v", i, iv)
		}
		auc := batemanArea(a, b, doses, d, v, ka, k)
		check("auctau", iv.AUCtau, auc, 1e-3)
		check("cavg", iv.Cavg, auc/tau, 1e-3)
		check("clss", iv.CLss, d/auc, 1e-3)
		cmin := batemanSum(a, doses, d, v, ka, k) // the trough is at the dose
		if i == 0 {
			cmin = 0
		}
		check("cmin", iv.Cmin, cmin, 1e-12)
		check("ctau", iv.Ctau, batemanSum(b, doses, d, v, ka, k), 1e-12)
		cmax := 0.0
		for j := 0; j <= 120; j++ {
			cmax = math.Max(cmax, batemanSum(a+float64(j)/10, doses, d, v, ka, k))
		}
		check("cmax", iv.Cmax, cmax, 1e-12)
		check("fluctuationPct", iv.Fluctuation, 100*(cmax-cmin)/(auc/tau), 1e-3)
		if i > 0 {
			check("swing", iv.Swing, (cmax-cmin)/cmin, 1e-12)
		} else if iv.Swing != nil {
			t.Errorf("first interval swing %v with Cmin = 0, want null", *iv.Swing)
		}
		check("accumulationIndex", iv.Accumulation, 1/(1-math.Exp(-k*tau)), 1e-5)
	}
	// The tenth interval is at steady state: AUCtau = Dose/CL = Dose/(k·V).
	check("auctau_ss", r.Intervals[9].AUCtau, d/(k*v), 1e-3)
	t.Logf("largest relative differences from the analytic values: %v", worst)
}

// Theophylline subject 1 with tau = 24 h, worked by hand: the interval ends
// before Tlast (24.37 h), so Ctau is the chord between 12.12 and 24.37 h
// (linear) and AUCtau the partial AUC 0–24; Cmin is the observed 0.74 at 0.
func TestTauTheophSubject1ByHand(t *testing.T) {
	p := theophProfiles(t)[0]
	p.Tau = ptr(24)
	r, err := NCA(p, Options{AUCMethod: AUCLinear})
	if err != nil {
		t.Fatal(err)
	}
	iv := r.Intervals[0]
	ctau := 5.94 + (3.28-5.94)*(24-12.12)/(24.37-12.12)
	auc := 148.92305 - 56.4725 + (24-12.12)*(5.94+ctau)/2
	for name, g := range map[string][2]float64{
		"ctau": {*iv.Ctau, ctau}, "auctau": {*iv.AUCtau, auc}, "cmin": {*iv.Cmin, 0.74}, "cmax": {*iv.Cmax, 10.5},
		"tmax": {*iv.Tmax, 1.12}, "cavg": {*iv.Cavg, auc / 24}, "fluctuation": {*iv.Fluctuation, 100 * (10.5 - 0.74) / (auc / 24)},
		"swing": {*iv.Swing, (10.5 - 0.74) / 0.74}, "clss": {*iv.CLss, 320 / auc},
		"accumulation": {*iv.Accumulation, 1 / (1 - math.Exp(-r.Terminal.LambdaZ*24))},
	} {
		if !near(g[0], g[1], 1e-12) {
			t.Errorf("%s = %v, by hand %v", name, g[0], g[1])
		}
	}
	// An interval past Tlast and λz extrapolates, and says so.
	p.Tau = ptr(36)
	r, _ = NCA(p, Options{AUCMethod: AUCLinear})
	if iv := r.Intervals[0]; !iv.Extrapolated || iv.Ctau == nil || !near(*iv.Ctau, 3.28*math.Exp(-r.Terminal.LambdaZ*(36-24.37)), 1e-12) {
		t.Errorf("tau 36 h: %+v", iv)
	}
}
