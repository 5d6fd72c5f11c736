package pk

import (
	"fmt"
	"math"
	"slices"

	"github.com/scidex/substrate/skills/problem"
)

// Routes of administration this package analyses (single dose, given at t = 0).
const (
	// RouteExtravascular is any route with an absorption phase (oral, sc, im…).
	RouteExtravascular = "extravascular"
	// RouteIVBolus is an intravenous bolus: the whole dose is in plasma at t = 0.
	RouteIVBolus = "iv_bolus"
)

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

// Selections lists the terminal point selections.
var Selections = []string{SelectionBestFit, SelectionFixedPoints}

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
}

// Options choose the calculation route; both are named in the result.
type Options struct {
	// AUCMethod is AUCLinear or AUCLinearUpLogDown; required.
	AUCMethod string `json:"aucMethod"`
	// LambdaZPoints, when set, fixes the number of terminal points used for
	// λz (the last n eligible points, n ≥ 3) instead of the best-fit search.
	LambdaZPoints *int `json:"lambdaZPoints,omitempty"`
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
	case RouteExtravascular, RouteIVBolus:
	case "":
		ps.Add(path("route"), CodeRouteRequired, nil, "is missing: expected %q or %q", RouteExtravascular, RouteIVBolus)
	default:
		ps.Add(path("route"), CodeUnknownRoute, p.Route, "is %q: expected %q or %q", p.Route, RouteExtravascular, RouteIVBolus)
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
	return ps
}
