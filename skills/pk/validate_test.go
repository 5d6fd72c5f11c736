package pk

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scidex/substrate/skills/problem"
)

func goodProfile() Profile {
	return Profile{Subject: "s", Times: []float64{0, 1, 2, 4, 8, 12}, Conc: []float64{0, 5, 4, 3, 1.5, 0.8}, Dose: 100, Route: RouteExtravascular}
}

func fptr(v float64) *float64 { return &v }
func iptr(v int) *int         { return &v }

// TestRefusals: each bad input is refused with its path and code, and no
// result is returned.
func TestRefusals(t *testing.T) {
	lin := Options{AUCMethod: AUCLinear}
	cases := []struct {
		name       string
		edit       func(*Profile, *Options)
		path, code string
	}{
		{"unsorted", func(p *Profile, _ *Options) { p.Times[3] = 1.5 }, "times[3]", CodeUnsortedTimes},
		{"duplicate", func(p *Profile, _ *Options) { p.Times[2] = 1 }, "times[2]", CodeDuplicateTime},
		{"negative conc", func(p *Profile, _ *Options) { p.Conc[4] = -0.1 }, "conc[4]", CodeNegativeConcentration},
		{"negative time", func(p *Profile, _ *Options) { p.Times[0] = -1 }, "times[0]", CodeNegativeTime},
		{"NaN time", func(p *Profile, _ *Options) { p.Times[5] = math.NaN() }, "times[5]", CodeNotFinite},
		{"Inf conc", func(p *Profile, _ *Options) { p.Conc[1] = math.Inf(1) }, "conc[1]", CodeNotFinite},
		{"NaN conc", func(p *Profile, _ *Options) { p.Conc[1] = math.NaN() }, "conc[1]", CodeNotFinite},
		{"mismatch", func(p *Profile, _ *Options) { p.Conc = p.Conc[:5] }, "conc", CodeLengthMismatch},
		{"too few", func(p *Profile, _ *Options) { p.Times, p.Conc = p.Times[:2], p.Conc[:2] }, "times", CodeTooFewPoints},
		{"zero dose", func(p *Profile, _ *Options) { p.Dose = 0 }, "dose", CodeNonPositiveDose},
		{"negative dose", func(p *Profile, _ *Options) { p.Dose = -5 }, "dose", CodeNonPositiveDose},
		{"NaN dose", func(p *Profile, _ *Options) { p.Dose = math.NaN() }, "dose", CodeNotFinite},
		{"no route", func(p *Profile, _ *Options) { p.Route = "" }, "route", CodeRouteRequired},
		{"unknown route", func(p *Profile, _ *Options) { p.Route = "oral" }, "route", CodeUnknownRoute},
		{"zero lloq", func(p *Profile, _ *Options) { p.LLOQ, p.BLQRule = fptr(0), BLQZero }, "lloq", CodeNonPositiveLLOQ},
		{"lloq without rule", func(p *Profile, _ *Options) { p.LLOQ = fptr(0.5) }, "blqRule", CodeBLQRuleRequired},
		{"rule without lloq", func(p *Profile, _ *Options) { p.BLQRule = BLQZero }, "lloq", CodeLLOQRequired},
		{"unknown rule", func(p *Profile, _ *Options) { p.LLOQ, p.BLQRule = fptr(0.5), "drop" }, "blqRule", CodeUnknownBLQRule},
		{"no method", func(_ *Profile, o *Options) { o.AUCMethod = "" }, "aucMethod", CodeAUCMethodRequired},
		{"unknown method", func(_ *Profile, o *Options) { o.AUCMethod = "log" }, "aucMethod", CodeUnknownAUCMethod},
		{"λz points < 3", func(_ *Profile, o *Options) { o.LambdaZPoints = iptr(2) }, "lambdaZPoints", CodeLambdaZPointsRange},
		{"λz points > eligible", func(_ *Profile, o *Options) { o.LambdaZPoints = iptr(5) }, "lambdaZPoints", CodeLambdaZPointsRange},
		{"infusion without duration", func(p *Profile, _ *Options) { p.Route = RouteIVInfusion }, "duration", CodeDurationRequired},
		{"duration not infusion", func(p *Profile, _ *Options) { p.Duration = fptr(1) }, "duration", CodeDurationNotInfusion},
		{"zero duration", func(p *Profile, _ *Options) { p.Route, p.Duration = RouteIVInfusion, fptr(0) }, "duration", CodeNonPositive},
		{"zero tau", func(p *Profile, _ *Options) { p.Tau = fptr(0) }, "tau", CodeNonPositive},
		{"dose times without tau", func(p *Profile, _ *Options) { p.DoseTimes = []float64{0, 12} }, "tau", CodeTauRequired},
		{"first dose not at 0", func(p *Profile, _ *Options) { p.Tau, p.DoseTimes = fptr(12), []float64{1, 12} }, "doseTimes[0]", CodeBadDoseTimes},
		{"dose times unsorted", func(p *Profile, _ *Options) { p.Tau, p.DoseTimes = fptr(12), []float64{0, 12, 6} }, "doseTimes[2]", CodeBadDoseTimes},
		{"partial end before start", func(_ *Profile, o *Options) { o.PartialAUCs = []PartialAUCRequest{{Start: 4, End: 2}} }, "partialAUCs[0].end", CodeBadInterval},
		{"partial negative start", func(_ *Profile, o *Options) { o.PartialAUCs = []PartialAUCRequest{{Start: -1, End: 2}} }, "partialAUCs[0].start", CodeBadInterval},
		{"partial interpolation", func(_ *Profile, o *Options) { o.PartialAUCs = []PartialAUCRequest{{End: 2, Interpolation: "log"}} }, "partialAUCs[0].interpolation", CodeUnknownInterpolation},
		{"partial extrapolation", func(_ *Profile, o *Options) { o.PartialAUCs = []PartialAUCRequest{{End: 2, Extrapolation: "zero"}} }, "partialAUCs[0].extrapolation", CodeUnknownExtrapolation},
		{"urine overlapping", func(p *Profile, _ *Options) {
			p.Urine = []UrineCollection{{Start: 0, End: 4, Volume: 0.2, Conc: 10}, {Start: 3, End: 8, Volume: 0.2, Conc: 5}}
		}, "urine[1].start", CodeBadInterval},
		{"urine negative volume", func(p *Profile, _ *Options) { p.Urine = []UrineCollection{{Start: 0, End: 4, Volume: -1, Conc: 10}} }, "urine[0].volume", CodeNegativeConcentration},
		{"too many dose times", func(p *Profile, _ *Options) {
			p.Tau = fptr(1)
			for i := 0; i <= MaxDoseTimes; i++ {
				p.DoseTimes = append(p.DoseTimes, float64(i))
			}
		}, "doseTimes", CodeTooMany},
		{"too many partial AUCs", func(_ *Profile, o *Options) { o.PartialAUCs = make([]PartialAUCRequest, MaxPartialAUCs+1) }, "partialAUCs", CodeTooMany},
		{"too many urine collections", func(p *Profile, _ *Options) { p.Urine = make([]UrineCollection, MaxUrine+1) }, "urine", CodeTooMany},
		{"all zero", func(p *Profile, _ *Options) { p.Conc = make([]float64, 6) }, "conc", CodeNoQuantifiable},
		{"all BLQ", func(p *Profile, _ *Options) { p.LLOQ, p.BLQRule = fptr(10), BLQZero }, "conc", CodeNoQuantifiable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, o := goodProfile(), lin
			tc.edit(&p, &o)
			r, err := NCA(p, o)
			var pe *problem.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *problem.Error", err)
			}
			if r != nil {
				t.Errorf("a result was returned with the error")
			}
			if pe.Problems[0].Path != tc.path || pe.Problems[0].Code != tc.code {
				t.Errorf("first problem %+v, want %s at %s (all: %v)", pe.Problems[0], tc.code, tc.path, err)
			}
			if pe.Problems[0].Message == "" {
				t.Error("empty message")
			}
		})
	}
	if _, err := NCA(goodProfile(), lin); err != nil {
		t.Fatalf("the good profile is refused: %v", err)
	}
}

// TestRefusalsAllReported: every problem is reported at once, in input order.
func TestRefusalsAllReported(t *testing.T) {
	p := goodProfile()
	p.Times[2], p.Conc[3], p.Dose = 1, -1, 0
	_, err := NCA(p, Options{AUCMethod: "x"})
	var pe *problem.Error
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	var got []string
	for _, pr := range pe.Problems {
		got = append(got, pr.Path+" "+pr.Code)
	}
	want := []string{"times[2] duplicate_time", "conc[3] negative_concentration", "dose non_positive_dose", "aucMethod unknown_auc_method"}
	if len(got) != len(want) {
		t.Fatalf("problems %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("problem %d = %s, want %s", i, got[i], want[i])
		}
	}
	if want := "pk: invalid input: times[2]: is 1, the same as times[1]"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to begin %q", err, want)
	}
}

// TestNCAManyPaths: paths name the profile; one bad profile stops them all.
func TestNCAManyPaths(t *testing.T) {
	a, b := goodProfile(), goodProfile()
	b.Subject = "t"
	b.Times[4] = 3
	rs, err := NCAMany([]Profile{a, b}, Options{AUCMethod: AUCLinear})
	var pe *problem.Error
	if !errors.As(err, &pe) || rs != nil {
		t.Fatalf("rs %v err %v", rs, err)
	}
	if p := pe.Problems[0]; p.Path != "profiles[1].times[4]" || p.Code != CodeUnsortedTimes {
		t.Errorf("problem %+v", p)
	}
	b.Times[4], b.Subject = 8, "s"
	if _, err := NCAMany([]Profile{a, b}, Options{AUCMethod: AUCLinear}); !errors.As(err, &pe) || pe.Problems[0].Code != CodeDuplicateSubject {
		t.Errorf("duplicate subjects: %v", err)
	}
	b.Subject, b.Conc = "t", make([]float64, 6)
	if _, err := NCAMany([]Profile{a, b}, Options{AUCMethod: AUCLinear}); !errors.As(err, &pe) || pe.Problems[0].Path != "profiles[1].conc" {
		t.Errorf("data-dependent problem: %v", err)
	}
	if _, err := NCAMany(nil, Options{AUCMethod: AUCLinear}); !errors.As(err, &pe) || pe.Problems[0].Code != CodeNoProfiles {
		t.Errorf("no profiles: %v", err)
	}
}

// TestLambdaZNotEstimable: a profile still rising at its last sample gives
// the AUCs and a warning, and no extrapolated parameter.
func TestLambdaZNotEstimable(t *testing.T) {
	p := Profile{Times: []float64{0, 1, 2, 4, 6}, Conc: []float64{0, 1, 2, 3, 2.5}, Dose: 10, Route: RouteExtravascular}
	r, err := NCA(p, Options{AUCMethod: AUCLinearUpLogDown})
	if err != nil {
		t.Fatal(err)
	}
	if r.Terminal != nil || r.AUCinfObs != nil || r.CLObs != nil || r.VzObs != nil || r.MRTinfObs != nil {
		t.Errorf("extrapolated values without λz: %+v", r)
	}
	if !hasNote(r.Warnings, WarnLambdaZNotEstimable) {
		t.Errorf("warnings %v", r.Warnings)
	}
	if !near(r.AUClast, 0.5+1.5+5+2*(3-2.5)/math.Log(3/2.5), 1e-12) {
		t.Errorf("AUClast %v", r.AUClast)
	}
	// A rising tail: three points after Tmax with a positive slope.
	p = Profile{Times: []float64{0, 1, 2, 3, 4, 5}, Conc: []float64{0, 9, 2, 3, 4, 5}, Dose: 10, Route: RouteExtravascular}
	if r, _ := NCA(p, Options{AUCMethod: AUCLinear}); r.Terminal != nil || !hasNote(r.Warnings, WarnLambdaZNotEstimable) {
		t.Errorf("rising tail fitted: %+v", r.Terminal)
	}
}

// TestTimeZero: extravascular without t = 0 assumes C(0) = 0; an IV bolus
// with a zero pre-dose sample back-extrapolates; an IV bolus whose first two
// samples do not decline takes C0 = C1.
func TestTimeZero(t *testing.T) {
	ev := Profile{Times: []float64{1, 2, 4, 8}, Conc: []float64{4, 6, 3, 1}, Dose: 10, Route: RouteExtravascular}
	r, err := NCA(ev, Options{AUCMethod: AUCLinear})
	if err != nil {
		t.Fatal(err)
	}
	// By hand: 1·(0+4)/2 + 1·(4+6)/2 + 2·(6+3)/2 + 4·(3+1)/2 = 2 + 5 + 9 + 8.
	if r.C0 != 0 || !hasNote(r.Imputations, NoteC0AssumedZero) || !near(r.AUClast, 24, 1e-12) {
		t.Errorf("C0 %v notes %v AUClast %v", r.C0, r.Imputations, r.AUClast)
	}
	iv := Profile{Times: []float64{0, 1, 2, 4}, Conc: []float64{0, 8, 4, 1}, Dose: 10, Route: RouteIVBolus}
	r, err = NCA(iv, Options{AUCMethod: AUCLinear})
	if err != nil {
		t.Fatal(err)
	}
	// C0 = 8·(8/4)^(1/1) = 16; AUC = 1·(16+8)/2 + 1·(8+4)/2 + 2·(4+1)/2 = 12 + 6 + 5.
	if !near(r.C0, 16, 1e-12) || !hasNote(r.Imputations, NoteC0BackExtrapolated) || !near(r.AUClast, 23, 1e-12) {
		t.Errorf("C0 %v notes %v AUClast %v", r.C0, r.Imputations, r.AUClast)
	}
	if r.Cmax != 8 || r.Tmax != 1 {
		t.Errorf("Cmax %v at %v: the imputed C0 must not be Cmax", r.Cmax, r.Tmax)
	}
	flat := Profile{Times: []float64{1, 2, 4, 6, 8}, Conc: []float64{5, 5, 3, 2, 1}, Dose: 10, Route: RouteIVBolus}
	if r, _ := NCA(flat, Options{AUCMethod: AUCLinear}); r.C0 != 5 || !hasNote(r.Imputations, NoteC0FirstObserved) {
		t.Errorf("C0 %v notes %v", r.C0, r.Imputations)
	}
}
