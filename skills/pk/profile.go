package pk

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/scidex/substrate/skills/problem"
)

// Routes of administration this package analyses (single dose, given at t = 0).
const (
	// RouteExtravascular is any route with an absorption phase (oral, sc, im…).
	RouteExtravascular = "extravascular"
	// RouteIVBolus is an intravenous bolus: the whole dose is in plasma at t = 0.
	RouteIVBolus = "iv_bolus"
	// RouteIVInfusion is a constant-rate intravenous infusion starting at
	// t = 0 and lasting Profile.Duration.
	RouteIVInfusion = "iv_infusion"
)

// Routes lists the route classes.
var Routes = []string{RouteExtravascular, RouteIVBolus, RouteIVInfusion}

// AUC integration methods; the caller chooses one and the result names it.
const (
	// AUCLinear is the linear trapezoidal rule on every interval.
	AUCLinear = "linear"
	// AUCLinearUpLogDown is the linear trapezoid where the concentration rises
	// or stays level (or either end is zero), the log trapezoid where it falls.
	AUCLinearUpLogDown = "linear_up_log_down"
)

// AUCMethods lists the AUC methods, for a caller's vocabulary.
var AUCMethods = []string{AUCLinear, AUCLinearUpLogDown}

// How the terminal points were chosen (Terminal.Selection): the adjusted-R²
// search, or Options.LambdaZPoints.
const (
	SelectionBestFit     = "best_fit"
	SelectionFixedPoints = "fixed_points"
)

// SelectionManualRange is the caller's time range (LambdaZControl.Start/End).
const SelectionManualRange = "manual_range"

// Selections lists the terminal point selections.
var Selections = []string{SelectionBestFit, SelectionFixedPoints, SelectionManualRange}

// Profile is one subject's concentration-time profile after a single dose at
// t = 0, in canonical units: times in h, concentrations in mg/L, dose in mg.
// The JSON names are the paths a [problem.Problem] uses.
type Profile struct {
	// Subject labels the profile in the result and the figure; it may be empty.
	Subject string `json:"subject"`
	// Times are the sampling times (h), strictly increasing, ≥ 0.
	Times []float64 `json:"times"`
	// Conc are the measured concentrations (mg/L), ≥ 0, one per time. A value
	// below LLOQ is handled by BLQRule.
	Conc []float64 `json:"conc"`
	// Dose is the administered dose (mg), > 0.
	Dose float64 `json:"dose"`
	// Route is RouteExtravascular or RouteIVBolus.
	Route string `json:"route"`
	// LLOQ is the lower limit of quantification (mg/L), > 0. When nil no
	// value is below the limit and a zero is a measured zero.
	LLOQ *float64 `json:"lloq,omitempty"`
	// BLQRule says what happens to values below LLOQ (see the BLQ constants);
	// required when LLOQ is set, refused when it is not.
	BLQRule string `json:"blqRule,omitempty"`
	// Duration is the infusion's length (h), > 0: required for
	// RouteIVInfusion, refused otherwise.
	Duration *float64 `json:"duration,omitempty"`
	// Tau is the dosing interval (h), > 0. With it, each dose's interval
	// [d, d + Tau] gets the steady-state parameters (see Interval).
	Tau *float64 `json:"tau,omitempty"`
	// DoseTimes are the times (h) of the doses, each of Dose, strictly
	// increasing, the first 0; default [0]. Needs Tau.
	DoseTimes []float64 `json:"doseTimes,omitempty"`
	// LambdaZ puts the terminal fit under the caller's control; nil is the
	// best-fit rule, unweighted.
	LambdaZ *LambdaZControl `json:"lambdaZ,omitempty"`
	// Urine are urine collections, for Ae, fe and CLr (see UrineResult).
	Urine []UrineCollection `json:"urine,omitempty"`
}

// LambdaZControl is the caller's choice of terminal fit.
type LambdaZControl struct {
	// Start and End, when both set, fit every usable sample with
	// Start ≤ t ≤ End (observed, positive, not excluded), Cmax included if
	// it falls in the range: the caller's range replaces the best-fit rule.
	Start *float64 `json:"start,omitempty"`
	End   *float64 `json:"end,omitempty"`
	// Exclude are samples (by their time) kept out of the fit, each with a
	// reason; they still count in every AUC.
	Exclude []Exclusion `json:"exclude,omitempty"`
	// Weighting is WeightUniform (default), WeightInvY or WeightInvY2.
	Weighting string `json:"weighting,omitempty"`
}

// Exclusion is a sample kept out of the λz fit, and why.
type Exclusion struct {
	Time   float64 `json:"time"`
	Reason string  `json:"reason"`
}

// Weightings of the λz regression of ln C on t: uniform, 1/C or 1/C² (the
// observed concentration), as Phoenix's Uniform, 1/Y, 1/(Y*Y).
const (
	WeightUniform = "uniform"
	WeightInvY    = "1/y"
	WeightInvY2   = "1/y2"
)

// Weightings lists the λz weightings.
var Weightings = []string{WeightUniform, WeightInvY, WeightInvY2}

// UrineCollection is one urine collection interval [Start, End] (h), its
// volume (L) and drug concentration (mg/L).
type UrineCollection struct {
	Start  float64 `json:"start"`
	End    float64 `json:"end"`
	Volume float64 `json:"volume"`
	Conc   float64 `json:"conc"`
}

// PartialAUCRequest asks for AUC from Start to End (h).
type PartialAUCRequest struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// Interpolation is how a concentration between two samples is read, and
	// how the sub-intervals are integrated: AUCLinear or AUCLinearUpLogDown
	// (log where falling); default the AUC method.
	Interpolation string `json:"interpolation,omitempty"`
	// Extrapolation beyond Tlast: ExtrapLambdaZ (default: C = Clast·e^(−λz(t−Tlast)),
	// observed Clast, as PKNCA and Phoenix) or ExtrapNone (the AUC is not computed).
	Extrapolation string `json:"extrapolation,omitempty"`
}

// Partial AUC extrapolation rules beyond Tlast.
const (
	ExtrapLambdaZ = "lambda_z"
	ExtrapNone    = "none"
)

// Extrapolations lists the partial AUC extrapolation rules.
var Extrapolations = []string{ExtrapLambdaZ, ExtrapNone}

// Options choose the calculation route; both are named in the result.
type Options struct {
	// AUCMethod is AUCLinear or AUCLinearUpLogDown; required.
	AUCMethod string `json:"aucMethod"`
	// LambdaZPoints, when set, fixes the number of terminal points used for
	// λz (the last n eligible points, n ≥ 3) instead of the best-fit search.
	LambdaZPoints *int `json:"lambdaZPoints,omitempty"`
	// PartialAUCs are the partial AUCs to report, for every profile.
	PartialAUCs []PartialAUCRequest `json:"partialAUCs,omitempty"`
}

// validate checks everything that can be checked without computing; paths are
// prefixed with prefix (empty, or "profiles[i]." from NCAMany).
func validate(p Profile, o Options, prefix string) problem.List {
	var ps problem.List
	path := func(s string) string { return prefix + s }
	if len(p.Times) != len(p.Conc) {
		ps.Add(path("conc"), CodeLengthMismatch, len(p.Conc),
			"has %d values but times has %d: expected one concentration per time", len(p.Conc), len(p.Times))
	}
	if len(p.Times) < 3 {
		ps.Add(path("times"), CodeTooFewPoints, len(p.Times),
			"has %d samples: expected at least 3", len(p.Times))
	}
	for i, t := range p.Times {
		at := path(fmt.Sprintf("times[%d]", i))
		switch {
		case math.IsNaN(t) || math.IsInf(t, 0):
			ps.Add(at, CodeNotFinite, fmt.Sprint(t), "is %v: expected a finite time in h", t)
		case t < 0:
			ps.Add(at, CodeNegativeTime, t, "is %v: expected a time ≥ 0 h (the dose is given at t = 0)", t)
		case i > 0 && !math.IsNaN(p.Times[i-1]) && t == p.Times[i-1]:
			ps.Add(at, CodeDuplicateTime, t, "is %v, the same as times[%d]: expected strictly increasing times", t, i-1)
		case i > 0 && !math.IsNaN(p.Times[i-1]) && t < p.Times[i-1]:
			ps.Add(at, CodeUnsortedTimes, t, "is %v, before times[%d] = %v: expected strictly increasing times", t, i-1, p.Times[i-1])
		}
	}
	for i, c := range p.Conc {
		at := path(fmt.Sprintf("conc[%d]", i))
		switch {
		case math.IsNaN(c) || math.IsInf(c, 0):
			ps.Add(at, CodeNotFinite, fmt.Sprint(c), "is %v: expected a finite concentration in mg/L", c)
		case c < 0:
			ps.Add(at, CodeNegativeConcentration, c, "is %v: expected a concentration ≥ 0 mg/L", c)
		}
	}
	switch d := p.Dose; {
	case math.IsNaN(d) || math.IsInf(d, 0):
		ps.Add(path("dose"), CodeNotFinite, fmt.Sprint(d), "is %v: expected a finite dose in mg", d)
	case d <= 0:
		ps.Add(path("dose"), CodeNonPositiveDose, d, "is %v: expected a dose > 0 mg", d)
	}
	switch p.Route {
	case RouteExtravascular, RouteIVBolus, RouteIVInfusion:
	case "":
		ps.Add(path("route"), CodeRouteRequired, nil, "is missing: expected one of %v", Routes)
	default:
		ps.Add(path("route"), CodeUnknownRoute, p.Route, "is %q: expected one of %v", p.Route, Routes)
	}
	switch {
	case p.Route == RouteIVInfusion && p.Duration == nil:
		ps.Add(path("duration"), CodeDurationRequired, nil, "is missing: an IV infusion needs its duration in h")
	case p.Route != RouteIVInfusion && p.Duration != nil:
		ps.Add(path("duration"), CodeDurationNotInfusion, *p.Duration, "is %v h but the route is %q: a duration is only for %q", *p.Duration, p.Route, RouteIVInfusion)
	case p.Duration != nil && !(*p.Duration > 0 && !math.IsInf(*p.Duration, 0)):
		ps.Add(path("duration"), CodeNonPositive, *p.Duration, "is %v: expected a finite duration > 0 h", *p.Duration)
	}
	validateDosing(&ps, p, path)
	validateLambdaZ(&ps, p, o, path)
	validateUrine(&ps, p, path)
	switch {
	case slices.Contains(AUCMethods, o.AUCMethod):
	case o.AUCMethod == "":
		ps.Add(path("aucMethod"), CodeAUCMethodRequired, nil, "is missing: expected %q or %q", AUCLinear, AUCLinearUpLogDown)
	default:
		ps.Add(path("aucMethod"), CodeUnknownAUCMethod, o.AUCMethod, "is %q: expected %q or %q", o.AUCMethod, AUCLinear, AUCLinearUpLogDown)
	}
	if o.LambdaZPoints != nil && *o.LambdaZPoints < 3 {
		ps.Add(path("lambdaZPoints"), CodeLambdaZPointsRange, *o.LambdaZPoints,
			"is %d: expected at least 3 points for the terminal fit", *o.LambdaZPoints)
	}
	if p.LLOQ != nil {
		switch l := *p.LLOQ; {
		case math.IsNaN(l) || math.IsInf(l, 0):
			ps.Add(path("lloq"), CodeNotFinite, fmt.Sprint(l), "is %v: expected a finite limit in mg/L", l)
		case l <= 0:
			ps.Add(path("lloq"), CodeNonPositiveLLOQ, l, "is %v: expected a limit > 0 mg/L", l)
		}
	}
	switch {
	case p.BLQRule == "" && p.LLOQ != nil:
		ps.Add(path("blqRule"), CodeBLQRuleRequired, nil, "is missing: lloq is set, so a rule for values below it is required (one of %v)", BLQRules)
	case p.BLQRule != "" && !knownBLQRule(p.BLQRule):
		ps.Add(path("blqRule"), CodeUnknownBLQRule, p.BLQRule, "is %q: expected one of %v", p.BLQRule, BLQRules)
	case p.BLQRule != "" && p.LLOQ == nil:
		ps.Add(path("lloq"), CodeLLOQRequired, nil, "is missing: blqRule %q needs the limit it applies to", p.BLQRule)
	}
	return ps
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Caps on the lists a caller gives, so a request's work stays bounded
// (each dosing interval and partial AUC walks the samples).
const (
	MaxDoseTimes   = 500
	MaxPartialAUCs = 100
	MaxUrine       = 500
	MaxExclusions  = 1000
)

// tooMany refuses a list longer than its cap.
func tooMany(ps *problem.List, path string, n, max int, what string) bool {
	if n > max {
		ps.Add(path, CodeTooMany, n, "has %d %s: at most %d are analysed in one call", n, what, max)
		return true
	}
	return false
}

// validateDosing checks tau and doseTimes.
func validateDosing(ps *problem.List, p Profile, path func(string) string) {
	if tooMany(ps, path("doseTimes"), len(p.DoseTimes), MaxDoseTimes, "dose times") {
		return
	}
	if p.Tau != nil && !(finite(*p.Tau) && *p.Tau > 0) {
		ps.Add(path("tau"), CodeNonPositive, *p.Tau, "is %v: expected a finite dosing interval > 0 h", *p.Tau)
	}
	if len(p.DoseTimes) > 0 && p.Tau == nil {
		ps.Add(path("tau"), CodeTauRequired, nil, "is missing: doseTimes are given, so the dosing interval each dose's parameters cover is needed")
	}
	for i, d := range p.DoseTimes {
		at := path(fmt.Sprintf("doseTimes[%d]", i))
		switch {
		case !finite(d):
			ps.Add(at, CodeNotFinite, fmt.Sprint(d), "is %v: expected a finite time in h", d)
		case i == 0 && d != 0:
			ps.Add(at, CodeBadDoseTimes, d, "is %v: expected the first dose at t = 0 h (times are after the first dose)", d)
		case i > 0 && !(d > p.DoseTimes[i-1]):
			ps.Add(at, CodeBadDoseTimes, d, "is %v, not after doseTimes[%d] = %v: expected strictly increasing dose times", d, i-1, p.DoseTimes[i-1])
		}
	}
	if p.Route == RouteIVInfusion && len(p.DoseTimes) > 1 {
		ps.Add(path("doseTimes"), CodeBadDoseTimes, len(p.DoseTimes), "has %d doses: repeated infusions are not analysed; give one dose (tau alone) or an extravascular or IV bolus route", len(p.DoseTimes))
	}
}

// validateLambdaZ checks the caller's λz control.
func validateLambdaZ(ps *problem.List, p Profile, o Options, path func(string) string) {
	lz := p.LambdaZ
	if lz == nil {
		return
	}
	if (lz.Start == nil) != (lz.End == nil) {
		ps.Add(path("lambdaZ"), CodeLambdaZRange, nil, "gives only one of start and end: a manual range needs both")
	}
	if lz.Start != nil && lz.End != nil {
		if !finite(*lz.Start) || !finite(*lz.End) || !(*lz.End > *lz.Start) {
			ps.Add(path("lambdaZ.end"), CodeLambdaZRange, *lz.End, "is %v: expected a finite time after start (%v h)", *lz.End, *lz.Start)
		}
		if o.LambdaZPoints != nil {
			ps.Add(path("lambdaZPoints"), CodeLambdaZRange, *o.LambdaZPoints, "is %d, and a manual range is also given: choose one", *o.LambdaZPoints)
		}
	}
	if lz.Weighting != "" && !slices.Contains(Weightings, lz.Weighting) {
		ps.Add(path("lambdaZ.weighting"), CodeUnknownWeighting, lz.Weighting, "is %q: expected one of %v", lz.Weighting, Weightings)
	}
	if tooMany(ps, path("lambdaZ.exclude"), len(lz.Exclude), MaxExclusions, "exclusions") {
		return
	}
	for i, x := range lz.Exclude {
		at := func(f string) string { return path(fmt.Sprintf("lambdaZ.exclude[%d].%s", i, f)) }
		if !slices.Contains(p.Times, x.Time) {
			ps.Add(at("time"), CodeExcludedNotSample, x.Time, "is %v h, not a sampling time: expected one of the profile's times", x.Time)
		}
		if strings.TrimSpace(x.Reason) == "" {
			ps.Add(at("reason"), CodeExclusionReason, x.Reason, "is empty: say why the sample at %v h is kept out of the fit (it is recorded in the result)", x.Time)
		}
	}
}

// validateUrine checks the urine collections.
func validateUrine(ps *problem.List, p Profile, path func(string) string) {
	if tooMany(ps, path("urine"), len(p.Urine), MaxUrine, "urine collections") {
		return
	}
	for i, u := range p.Urine {
		at := func(f string) string { return path(fmt.Sprintf("urine[%d].%s", i, f)) }
		switch {
		case !finite(u.Start) || u.Start < 0:
			ps.Add(at("start"), CodeBadInterval, u.Start, "is %v: expected a finite time ≥ 0 h", u.Start)
		case !finite(u.End) || !(u.End > u.Start):
			ps.Add(at("end"), CodeBadInterval, u.End, "is %v: expected a finite time after start (%v h)", u.End, u.Start)
		case i > 0 && u.Start < p.Urine[i-1].End:
			ps.Add(at("start"), CodeBadInterval, u.Start, "is %v, before urine[%d] ends (%v h): expected collections in order, not overlapping", u.Start, i-1, p.Urine[i-1].End)
		}
		if !finite(u.Volume) || u.Volume < 0 {
			ps.Add(at("volume"), CodeNegativeConcentration, u.Volume, "is %v: expected a finite volume ≥ 0 L", u.Volume)
		}
		if !finite(u.Conc) || u.Conc < 0 {
			ps.Add(at("conc"), CodeNegativeConcentration, u.Conc, "is %v: expected a finite concentration ≥ 0 mg/L", u.Conc)
		}
	}
}

// validatePartials checks the partial AUC requests, once per call (they
// are options, shared by every profile).
func validatePartials(o Options) problem.List {
	var ps problem.List
	if tooMany(&ps, "partialAUCs", len(o.PartialAUCs), MaxPartialAUCs, "partial AUCs") {
		return ps
	}
	for i, q := range o.PartialAUCs {
		at := func(f string) string { return fmt.Sprintf("partialAUCs[%d].%s", i, f) }
		switch {
		case !finite(q.Start) || q.Start < 0:
			ps.Add(at("start"), CodeBadInterval, q.Start, "is %v: expected a finite time ≥ 0 h", q.Start)
		case !finite(q.End) || !(q.End > q.Start):
			ps.Add(at("end"), CodeBadInterval, q.End, "is %v: expected a finite time after start (%v h)", q.End, q.Start)
		}
		if q.Interpolation != "" && !slices.Contains(AUCMethods, q.Interpolation) {
			ps.Add(at("interpolation"), CodeUnknownInterpolation, q.Interpolation, "is %q: expected one of %v", q.Interpolation, AUCMethods)
		}
		if q.Extrapolation != "" && !slices.Contains(Extrapolations, q.Extrapolation) {
			ps.Add(at("extrapolation"), CodeUnknownExtrapolation, q.Extrapolation, "is %q: expected one of %v", q.Extrapolation, Extrapolations)
		}
	}
	return ps
}
