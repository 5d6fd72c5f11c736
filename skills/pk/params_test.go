package pk

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// relDiff is |got − want|/|want| (absolute when want is 0).
func relDiff(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// TestTheophNonCompartPublished checks the parameters added in pk.nca/1.1
// against NonCompart's published Theoph table (testdata/
// noncompart_theoph_linear.txt, 2 decimals, linear method): each value is
// within half a unit of the last printed digit.
func TestTheophNonCompartPublished(t *testing.T) {
	f, err := os.Open("testdata/noncompart_theoph_linear.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps := theophProfiles(t)
	rs, err := NCAMany(ps, Options{AUCMethod: AUCLinear, PartialAUCs: []PartialAUCRequest{{Start: 0, End: 12}}})
	if err != nil {
		t.Fatal(err)
	}
	cols := []string{"cmaxd", "tlag", "corrxy", "aucinfobsd", "aucinfpredd", "aumcpctextrapobs", "aumcpctextrappred", "iauc"}
	worst := map[string]float64{}
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		rows++
		i, _ := strconv.Atoi(fs[0])
		r := rs[i-1]
		got := params(r)
		got["iauc"] = *r.PartialAUCs[0].AUC
		for j, k := range cols {
			want, _ := strconv.ParseFloat(fs[j+1], 64)
			g := got[k]
			if math.Abs(g-want) > 0.005+1e-9 {
				t.Errorf("subject %d %s = %.6g, NonCompart published %v", i, k, g, want)
			}
			if want != 0 {
				worst[k] = math.Max(worst[k], relDiff(g, want))
			}
		}
	}
	if rows != 12 {
		t.Fatalf("read %d subjects from the published table, want 12", rows)
	}
	t.Logf("largest relative difference from NonCompart's printed values: %v", worst)
}

// TestTheophNewParametersNaive checks every new parameter on all 12
// subjects, both methods, against the naive implementation, and partial AUCs
// inside the samples, across a sample, and past Tlast against
// naivePartialAUC, to 1e-9 relative.
func TestTheophNewParametersNaive(t *testing.T) {
	ps := theophProfiles(t)
	windows := []PartialAUCRequest{{Start: 0, End: 12}, {Start: 0.5, End: 7.5}, {Start: 2.02, End: 9.05}, {Start: 6, End: 30}, {Start: 25, End: 48}}
	worst := 0.0
	for _, method := range AUCMethods {
		rs, err := NCAMany(ps, Options{AUCMethod: method, PartialAUCs: windows})
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range ps {
			want := naiveNCA(p.Times, p.Conc, p.Dose, method == AUCLinearUpLogDown)
			got := params(rs[i])
			for _, k := range []string{"cmaxd", "tlag", "auclastd", "aucinfobsd", "aucinfpredd", "aumcpctextrapobs", "aumcpctextrappred", "corrxy"} {
				if !near(got[k], want[k], 1e-9) {
					t.Errorf("%s subject %s: %s = %v, naive %v", method, p.Subject, k, got[k], want[k])
				}
			}
			if got["corrxy"] >= 0 || !near(got["corrxy"], -math.Sqrt(got["r2"]), 1e-12) {
				t.Errorf("subject %s: Corr_XY %v, want −√R² = %v", p.Subject, got["corrxy"], -math.Sqrt(got["r2"]))
			}
			for j, w := range windows {
				pa := rs[i].PartialAUCs[j]
				nv := naivePartialAUC(p.Times, p.Conc, w.Start, w.End, method == AUCLinearUpLogDown, want["lambdaz"])
				if pa.AUC == nil || !near(*pa.AUC, nv, 1e-9) {
					t.Errorf("%s subject %s AUC(%v–%v) = %v, naive %v", method, p.Subject, w.Start, w.End, pa.AUC, nv)
					continue
				}
				worst = math.Max(worst, relDiff(*pa.AUC, nv))
				if pa.Interpolation != method || pa.Extrapolation != ExtrapLambdaZ || pa.Extrapolated != (w.End > rs[i].Tlast) {
					t.Errorf("partial AUC rules %+v", pa)
				}
			}
		}
	}
	t.Logf("largest relative difference of partial AUCs from the naive calculation: %.3g", worst)
}

// A partial AUC of a known exponential C = 10·e^(−0.2t) is exact with log
// interpolation, inside the samples, between them, and past Tlast (λz is
// exact); with extrapolation none the interval past Tlast is not computed
// and says why; linear interpolation is the chord.
func TestPartialAUCExponential(t *testing.T) {
	k, c0 := 0.2, 10.0
	ts := []float64{0, 1, 2, 4, 6, 8, 12}
	cs := make([]float64, len(ts))
	for i, x := range ts {
		cs[i] = c0 * math.Exp(-k*x)
	}
	exact := func(a, b float64) float64 { return c0 / k * (math.Exp(-k*a) - math.Exp(-k*b)) }
	p := Profile{Times: ts, Conc: cs, Dose: 100, Route: RouteIVBolus}
	r, err := NCA(p, Options{AUCMethod: AUCLinear, PartialAUCs: []PartialAUCRequest{
		{Start: 1.5, End: 7.3, Interpolation: AUCLinearUpLogDown},
		{Start: 10, End: 20, Interpolation: AUCLinearUpLogDown},
		{Start: 10, End: 20, Extrapolation: ExtrapNone},
		{Start: 1, End: 1.5, Interpolation: AUCLinear},
	}})
	if err != nil {
		t.Fatal(err)
	}
	pa := r.PartialAUCs
	for i, w := range [][2]float64{{1.5, 7.3}, {10, 20}} {
		if pa[i].AUC == nil || !near(*pa[i].AUC, exact(w[0], w[1]), 1e-12) {
			t.Errorf("AUC(%v–%v) = %v, exact %v", w[0], w[1], pa[i].AUC, exact(w[0], w[1]))
		}
	}
	if pa[2].AUC != nil || !strings.Contains(pa[2].Note, "after Tlast (12 h)") || pa[2].Extrapolation != ExtrapNone || pa[2].Interpolation != AUCLinear {
		t.Errorf("extrapolation none past Tlast: %+v", pa[2])
	}
	c15 := cs[1] + (cs[2]-cs[1])*0.5
	if want := 0.5 * (cs[1] + c15) / 2; pa[3].AUC == nil || !near(*pa[3].AUC, want, 1e-12) {
		t.Errorf("linear AUC(1–1.5) = %v, chord %v", pa[3].AUC, want)
	}
}

// A bad partial AUC request is one problem per call, not one per profile.
func TestPartialAUCRefusedOnce(t *testing.T) {
	ps := theophProfiles(t)[:3]
	_, err := NCAMany(ps, Options{AUCMethod: AUCLinear, PartialAUCs: []PartialAUCRequest{{Start: 5, End: 1}}})
	got := problemsOf(t, err)
	if len(got) != 1 || got[0].Path != "partialAUCs[0].end" || got[0].Code != CodeBadInterval {
		t.Fatalf("problems %+v, want one at partialAUCs[0].end", got)
	}
}
