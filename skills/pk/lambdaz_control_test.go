package pk

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scidex/substrate/skills/problem"
)

// naiveWeightedFit regresses ln c on t with weights w from the raw weighted
// sums (Sw·Swxy − Swx·Swy)/(Sw·Swxx − Swx²), r from the same sums with Swyy.
func naiveWeightedFit(ts, cs []float64, weighting string) (lz, icpt, r2, r float64) {
	var sw, swx, swy, swxx, swxy, swyy float64
	for i := range ts {
		w := 1.0
		switch weighting {
		case "1/y":
			w = 1 / cs[i]
		case "1/y2":
			w = 1 / (cs[i] * cs[i])
		}
		x, y := ts[i], math.Log(cs[i])
		sw += w
		swx += w * x
		swy += w * y
		swxx += w * x * x
		swxy += w * x * y
		swyy += w * y * y
	}
	num := sw*swxy - swx*swy
	slope := num / (sw*swxx - swx*swx)
	r = num / math.Sqrt((sw*swxx-swx*swx)*(sw*swyy-swy*swy))
	return -slope, (swy - slope*swx) / sw, r * r, r
}

// Theophylline subject 1 with a manual range 3.82–24.37 h, the 7.03 h sample
// excluded with a reason, under each weighting: λz, intercept, R² and Corr_XY
// agree with the naive weighted regression of the remaining points; the
// choice is recorded in the result; AUCinf uses that λz.
func TestLambdaZManualRangeWeighted(t *testing.T) {
	p := theophProfiles(t)[0]
	ts := []float64{3.82, 5.1, 9.05, 12.12, 24.37}
	cs := []float64{8.58, 8.36, 6.89, 5.94, 3.28}
	for _, w := range Weightings {
		p.LambdaZ = &LambdaZControl{Start: ptr(3.82), End: ptr(24.37), Weighting: w,
			Exclude: []Exclusion{{Time: 7.03, Reason: "sample haemolysed"}}}
		r, err := NCA(p, Options{AUCMethod: AUCLinear})
		if err != nil {
			t.Fatal(err)
		}
		tm := r.Terminal
		lz, icpt, r2, corr := naiveWeightedFit(ts, cs, w)
		for name, g := range map[string][2]float64{"lambdaZ": {tm.LambdaZ, lz}, "intercept": {tm.Intercept, icpt}, "r2": {tm.R2, r2}, "corrXY": {tm.CorrXY, corr},
			"aucinfObs": {*r.AUCinfObs, r.AUClast + 3.28/lz}} {
			if !near(g[0], g[1], 1e-9) {
				t.Errorf("%s: %s = %v, naive %v", w, name, g[0], g[1])
			}
		}
		if tm.N != 5 || tm.Selection != SelectionManualRange || tm.Weighting != w || *tm.RangeStart != 3.82 || *tm.RangeEnd != 24.37 ||
			len(tm.Excluded) != 1 || tm.Excluded[0] != (ExcludedPoint{Time: 7.03, Conc: 7.47, Reason: "sample haemolysed"}) {
			t.Errorf("%s: the choice is not recorded: %+v", w, tm)
		}
	}
	// Weighting changes the estimate: 1/y² differs from uniform.
	lu, _, _, _ := naiveWeightedFit(ts, cs, WeightUniform)
	l2, _, _, _ := naiveWeightedFit(ts, cs, WeightInvY2)
	if near(lu, l2, 1e-6) {
		t.Fatalf("the weightings give the same λz %v: the test cannot tell them apart", lu)
	}
}

// An excluded sample is never in a best-fit or fixed-points fit, and the
// exclusion is recorded; the range is drawn on the figure and the excluded
// sample crossed out with its reason.
func TestLambdaZExclusionBestFitAndFigure(t *testing.T) {
	p := theophProfiles(t)[0]
	p.LambdaZ = &LambdaZControl{Exclude: []Exclusion{{Time: 12.12, Reason: "outlier"}}}
	r, err := NCA(p, Options{AUCMethod: AUCLinear})
	if err != nil {
		t.Fatal(err)
	}
	tm := r.Terminal
	for _, x := range tm.Times {
		if x == 12.12 {
			t.Fatalf("the excluded sample is in the fit: %v", tm.Times)
		}
	}
	// The best fit over the rest ends with 9.05 and 24.37 h; check it against
	// the naive regression of the points it chose.
	var cs []float64
	for _, x := range tm.Times {
		for i, pt := range p.Times {
			if pt == x {
				cs = append(cs, p.Conc[i])
			}
		}
	}
	if lz, _, _, _ := naiveWeightedFit(tm.Times, cs, WeightUniform); !near(tm.LambdaZ, lz, 1e-9) || tm.Selection != SelectionBestFit || len(tm.Excluded) != 1 {
		t.Errorf("best fit with an exclusion: %+v, naive λz %v", tm, lz)
	}
	svg, err := FigureSVG(p, r, CanonicalAxisUnits)
	if err != nil {
		t.Fatal(err)
	}
	els, _, _ := parseSVG(t, svg)
	var ranges, crosses int
	for _, e := range els {
		switch e.class {
		case "lambda-z-range":
			ranges++
			if !strings.Contains(e.title, "best_fit") {
				t.Errorf("range title %q", e.title)
			}
		case "lambda-z-excluded":
			crosses++
			if e.title != "excluded from λz: t = 12.12 h, C = 5.94 mg/L: outlier" {
				t.Errorf("excluded title %q", e.title)
			}
		}
	}
	if ranges != 1 || crosses != 1 {
		t.Errorf("%d ranges and %d excluded marks drawn, want 1 and 1", ranges, crosses)
	}
	if !strings.Contains(string(svg), "1 excluded") {
		t.Errorf("the subtitle does not say a point was excluded")
	}
}

// Refusals of the λz control name the field, the value and what is wanted.
func TestLambdaZControlRefusals(t *testing.T) {
	base := theophProfiles(t)[0]
	cases := []struct {
		name string
		lz   LambdaZControl
		o    Options
		path string
		code string
		want string
	}{
		{"range too narrow", LambdaZControl{Start: ptr(20), End: ptr(30)}, Options{}, "lambdaZ.start", CodeTooFewInRange, "1 usable sample"},
		{"only start", LambdaZControl{Start: ptr(2)}, Options{}, "lambdaZ", CodeLambdaZRange, "needs both"},
		{"end before start", LambdaZControl{Start: ptr(9), End: ptr(3)}, Options{}, "lambdaZ.end", CodeLambdaZRange, "after start (9 h)"},
		{"range and points", LambdaZControl{Start: ptr(3), End: ptr(24.37)}, Options{LambdaZPoints: iptr(3)}, "lambdaZPoints", CodeLambdaZRange, "choose one"},
		{"unknown weighting", LambdaZControl{Weighting: "1/x"}, Options{}, "lambdaZ.weighting", CodeUnknownWeighting, `"1/x"`},
		{"not a sample", LambdaZControl{Exclude: []Exclusion{{Time: 13, Reason: "x"}}}, Options{}, "lambdaZ.exclude[0].time", CodeExcludedNotSample, "13 h"},
		{"no reason", LambdaZControl{Exclude: []Exclusion{{Time: 12.12}}}, Options{}, "lambdaZ.exclude[0].reason", CodeExclusionReason, "say why"},
	}
	for _, c := range cases {
		p := base
		lz := c.lz
		p.LambdaZ = &lz
		c.o.AUCMethod = AUCLinear
		_, err := NCA(p, c.o)
		ps := problemsOf(t, err)
		found := false
		for _, q := range ps {
			if q.Path == c.path && q.Code == c.code && strings.Contains(q.Message, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: problems %+v, want %s %s containing %q", c.name, ps, c.path, c.code, c.want)
		}
	}
}

// problemsOf returns the problems of a refusal, failing the test otherwise.
func problemsOf(t *testing.T, err error) []problem.Problem {
	t.Helper()
	var pe *problem.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *problem.Error", err)
	}
	return pe.Problems
}
