package pk

import (
	"fmt"
	"math"

	"github.com/scidex/substrate/skills/problem"
)

// NCA analyses one profile. It validates everything first and returns a
// *[problem.Error], computing nothing, when any rule is broken.
//
// The steps, each stated in the result's Imputations and Warnings:
//  1. BLQ values are set to zero or excluded by p.BLQRule (see [BLQRules]).
//  2. The integration starts at t = 0. A sample at t = 0 is used as observed
//     (theophylline subjects 1, 7 and 10 have a non-zero one), except a zero
//     for an IV bolus, which is a pre-dose sample and is replaced as if
//     missing. With no sample at t = 0: extravascular assumes C(0) = 0; IV
//     bolus back-extrapolates C0 = C1·(C1/C2)^(t1/(t2−t1)) from the first two
//     positive samples when C1 > C2, or else takes C0 = C1.
//  3. Cmax/Tmax, Clast/Tlast from the observed samples; AUC and AUMC by the
//     chosen method (see segment).
//  4. λz by the best-fit rule over the positive samples after Tmax (see
//     bestFit), or the last o.LambdaZPoints of them; then the extrapolated
//     parameters.
func NCA(p Profile, o Options) (*Result, error) {
	if err := append(validate(p, o, ""), validatePartials(o)...).Err(procedure); err != nil {
		return nil, err
	}
	return compute(p, o, "")
}

// NCAMany analyses several profiles with the same options. Problems' paths
// are prefixed "profiles[i]."; subjects must be distinct. Nothing is computed
// unless every profile is valid.
func NCAMany(ps []Profile, o Options) ([]*Result, error) {
	all := validatePartials(o)
	if len(ps) == 0 {
		all.Add("profiles", CodeNoProfiles, nil, "is empty: expected at least one profile")
	}
	seen := map[string]int{}
	for i, p := range ps {
		prefix := fmt.Sprintf("profiles[%d].", i)
		all = append(all, validate(p, o, prefix)...)
		if j, dup := seen[p.Subject]; dup {
			all.Add(prefix+"subject", CodeDuplicateSubject, p.Subject, "is %q, the same as profiles[%d]: expected distinct subjects", p.Subject, j)
		}
		seen[p.Subject] = i
	}
	if err := all.Err(procedure); err != nil {
		return nil, err
	}
	// Data-dependent checks (no quantifiable value, too many λz points) run
	// for every profile before any result is returned.
	out := make([]*Result, len(ps))
	for i, p := range ps {
		r, err := compute(p, o, fmt.Sprintf("profiles[%d].", i))
		if err != nil {
			if pe, ok := err.(*problem.Error); ok {
				all = append(all, pe.Problems...)
				continue
			}
			return nil, err
		}
		out[i] = r
	}
	if err := all.Err(procedure); err != nil {
		return nil, err
	}
	return out, nil
}

// compute runs the analysis of a validated profile; it still refuses inputs
// whose problem shows only once BLQ values are handled.
func compute(p Profile, o Options, prefix string) (*Result, error) {
	// The notes are lists, empty rather than null when there is none.
	r := &Result{Subject: p.Subject, Route: p.Route, Method: o.AUCMethod, BLQRule: p.BLQRule, Dose: p.Dose,
		Imputations: []Note{}, Warnings: []Note{}}
	r.CLName, r.VzName, r.Duration = "CL/F", "Vz/F", p.Duration
	if p.Route != RouteExtravascular {
		r.CLName, r.VzName = "CL", "Vz"
	}
	pts, zeroed, excluded := applyBLQ(p)
	if zeroed > 0 {
		r.note(NoteBLQZeroed, "%d value(s) below LLOQ %v mg/L set to 0 by rule %s", zeroed, *p.LLOQ, p.BLQRule)
	}
	if excluded > 0 {
		r.note(NoteBLQExcluded, "%d value(s) below LLOQ %v mg/L excluded by rule %s", excluded, *p.LLOQ, p.BLQRule)
	}

	if !anyPositive(pts) {
		var ps problem.List
		ps.Add(prefix+"conc", CodeNoQuantifiable, nil, "has no positive quantifiable concentration: nothing to analyse")
		return nil, ps.Err(procedure)
	}
	pts = r.startAtZero(p.Route, pts)
	r.C0 = pts[0].c

	// Cmax/Tmax (first occurrence) and Clast/Tlast over the observed samples:
	// an imputed C0 is never Cmax.
	imax, ilast := -1, -1
	for i, q := range pts {
		if q.observed && (imax < 0 || q.c > pts[imax].c) {
			imax = i
		}
		if q.c > 0 {
			ilast = i
		}
	}
	r.Cmax, r.Tmax = pts[imax].c, pts[imax].t
	r.Clast, r.Tlast = pts[ilast].c, pts[ilast].t
	r.CmaxD = r.Cmax / r.Dose
	if p.Route == RouteExtravascular {
		// Tlag: the time of the sample before the first positive one (0
		// when the first is positive), as PKNCA's tlag and Phoenix's Tlag.
		tlag := 0.0
		for i, q := range pts {
			if q.c > 0 {
				if i > 0 {
					tlag = pts[i-1].t
				}
				break
			}
		}
		r.Tlag = ptr(tlag)
	}

	r.AUClast, r.AUMClast = areas(o.AUCMethod, pts, ilast)
	r.AUCall, _ = areas(o.AUCMethod, pts, len(pts)-1)
	r.AUClastD = r.AUClast / r.Dose
	if r.AUClast > 0 {
		r.MRTlast = ptr(r.AUMClast/r.AUClast - r.infusionHalf())
	}

	tm, ok, err := r.terminal(p, o, pts, imax, ilast, prefix)
	if err != nil {
		return nil, err
	}
	if ok {
		r.Terminal = &tm
		r.extrapolate(tm)
	}
	cv := r.curve(pts, ilast)
	r.partials(cv, o.AUCMethod, o.PartialAUCs)
	r.intervals(cv, p, pts, o.AUCMethod)
	r.urine(cv, p.Urine, o.AUCMethod)
	return r, nil
}

// infusionHalf is the infusion's half duration, subtracted from the MRTs
// (MRT = AUMC/AUC − Tinf/2; 0 for the other routes).
func (r *Result) infusionHalf() float64 {
	if r.Duration == nil {
		return 0
	}
	return *r.Duration / 2
}

// terminal chooses and fits the λz points: the caller's range, the last
// o.LambdaZPoints eligible points, or the best-fit rule; excluded samples
// are never used and are recorded. ok is false (with a warning) when no fit
// qualifies; err refuses a range or point count the data cannot meet.
func (r *Result) terminal(p Profile, o Options, pts []point, imax, ilast int, prefix string) (Terminal, bool, error) {
	var lz LambdaZControl
	if p.LambdaZ != nil {
		lz = *p.LambdaZ
	}
	w := lz.Weighting
	if w == "" {
		w = WeightUniform
	}
	reason := map[float64]string{}
	for _, x := range lz.Exclude {
		reason[x.Time] = x.Reason
	}
	var excl []ExcludedPoint
	for _, q := range pts {
		if why, ok := reason[q.t]; ok && q.observed {
			excl = append(excl, ExcludedPoint{Time: q.t, Conc: q.c, Reason: why})
		}
	}
	keep := func(q point) bool { _, out := reason[q.t]; return q.observed && q.c > 0 && !out }
	// After several doses the terminal phase follows the last dose's peak.
	first := imax
	if n := len(p.DoseTimes); n > 1 {
		last := p.DoseTimes[n-1]
		first = -1
		for i, q := range pts {
			if q.observed && q.t >= last && (first < 0 || q.c > pts[first].c) {
				first = i
			}
		}
		if first < 0 {
			first = ilast
		}
	}
	var el []point
	for i := first + 1; i <= ilast; i++ {
		// Phoenix: no point before the end of an infusion (see Conventions).
		if p.Duration != nil && pts[i].t < *p.Duration {
			continue
		}
		if keep(pts[i]) {
			el = append(el, pts[i])
		}
	}
	var tm Terminal
	ok := false
	switch {
	case lz.Start != nil:
		var in []point
		for i := 0; i <= ilast; i++ {
			if q := pts[i]; keep(q) && q.t >= *lz.Start && q.t <= *lz.End {
				in = append(in, q)
			}
		}
		if len(in) < 3 {
			var ps problem.List
			ps.Add(prefix+"lambdaZ.start", CodeTooFewInRange, *lz.Start,
				"is %v h and end %v h: the range holds %d usable sample(s) (observed, positive, up to Tlast %v h, not excluded), fewer than the 3 a terminal fit needs; widen the range", *lz.Start, *lz.End, len(in), r.Tlast)
			return Terminal{}, false, ps.Err(procedure)
		}
		tm, ok = fit(in, w)
		tm.Selection, tm.RangeStart, tm.RangeEnd = SelectionManualRange, ptr(*lz.Start), ptr(*lz.End)
		if !ok {
			r.warn(WarnLambdaZNotEstimable, "λz not estimable: the log-linear fit of the %d samples in %v–%v h has slope %.4g 1/h, not falling; choose another range; AUCinf, t½, CL and Vz not computed",
				len(in), *lz.Start, *lz.End, slope(in))
		}
	case o.LambdaZPoints != nil:
		n := *o.LambdaZPoints
		if n > len(el) {
			var ps problem.List
			if len(el) < 3 {
				ps.Add(prefix+"lambdaZPoints", CodeLambdaZPointsRange, n,
					"is %d but only %d positive sample(s) follow Tmax (%v h), fewer than the 3 a terminal fit needs: leave lambda_z_points out (λz is then reported not estimable) or add samples after the peak", n, len(el), r.Tmax)
			} else {
				ps.Add(prefix+"lambdaZPoints", CodeLambdaZPointsRange, n,
					"is %d but only %d positive samples follow Tmax (%v h): expected 3..%d", n, len(el), r.Tmax, len(el))
			}
			return Terminal{}, false, ps.Err(procedure)
		}
		tm, ok = fit(el[len(el)-n:], w)
		tm.Selection = SelectionFixedPoints
	default:
		tm, ok = bestFit(el, w)
	}
	if !ok {
		if lz.Start == nil {
			r.warn(WarnLambdaZNotEstimable, "%s; AUCinf, t½, CL and Vz not computed", notEstimable(el, r, o.LambdaZPoints))
		}
		return Terminal{}, false, nil
	}
	tm.Excluded = excl
	if tm.Excluded == nil {
		tm.Excluded = []ExcludedPoint{}
	}
	return tm, true, nil
}

// startAtZero puts the concentration at t = 0 in front of the series when the
// series does not start with a usable one (see NCA, step 2).
func (r *Result) startAtZero(route string, pts []point) []point {
	if pts[0].t == 0 && (route != RouteIVBolus || pts[0].c > 0) {
		r.note(NoteC0Observed, "integration starts at t = 0 with the observed concentration %v mg/L", pts[0].c)
		return pts
	}
	if route != RouteIVBolus {
		r.note(NoteC0AssumedZero, "no sample at t = 0: C(0) = 0 assumed (%s dose)", map[string]string{RouteExtravascular: "extravascular", RouteIVInfusion: "infusion"}[route])
		return append([]point{{t: 0, c: 0}}, pts...)
	}
	if pts[0].t == 0 { // an IV bolus's zero at t = 0 is a pre-dose sample
		pts = pts[1:]
	}
	var pos []point
	for _, q := range pts {
		if q.c > 0 {
			pos = append(pos, q)
		}
	}
	// Validation and the quantifiable check guarantee one positive sample.
	c0 := pos[0].c
	if len(pos) >= 2 && pos[1].c < pos[0].c {
		t1, c1, t2, c2 := pos[0].t, pos[0].c, pos[1].t, pos[1].c
		c0 = c1 * math.Pow(c1/c2, t1/(t2-t1))
		r.note(NoteC0BackExtrapolated, "no usable sample at t = 0: C0 = %.6g mg/L back-extrapolated log-linearly from t = %v and %v h (IV bolus)", c0, t1, t2)
	} else {
		r.note(NoteC0FirstObserved, "no usable sample at t = 0 and the first two samples do not decline: C0 = first positive concentration %v mg/L (IV bolus)", c0)
	}
	return append([]point{{t: 0, c: c0}}, pts...)
}

func anyPositive(pts []point) bool {
	for _, q := range pts {
		if q.c > 0 {
			return true
		}
	}
	return false
}

// extrapolate fills the parameters that need λz. Formulas: Gabrielsson &
// Weiner, Pharmacokinetic and Pharmacodynamic Data Analysis, 5th ed. (2016),
// ch. 2 (non-compartmental analysis); the same as WinNonlin's NCA output and
// PKNCA (aucinf.obs, aucinf.pred, aumcinf, mrt, cl, vz).
func (r *Result) extrapolate(tm Terminal) {
	lz := tm.LambdaZ
	cpred := math.Exp(tm.Intercept - lz*r.Tlast)
	r.ClastPred = ptr(cpred)
	for _, v := range []struct {
		clast                                           float64
		auc, aucD, pct, aumc, aumcPct, mrt, cl, vz, vss **float64
	}{
		{r.Clast, &r.AUCinfObs, &r.AUCinfObsD, &r.AUCPctExtrapObs, &r.AUMCinfObs, &r.AUMCPctExtrapObs, &r.MRTinfObs, &r.CLObs, &r.VzObs, &r.VssObs},
		{cpred, &r.AUCinfPred, &r.AUCinfPredD, &r.AUCPctExtrapPred, &r.AUMCinfPred, &r.AUMCPctExtrapPred, &r.MRTinfPred, &r.CLPred, &r.VzPred, &r.VssPred},
	} {
		auc := r.AUClast + v.clast/lz
		aumc := r.AUMClast + v.clast*r.Tlast/lz + v.clast/(lz*lz)
		mrt := aumc/auc - r.infusionHalf()
		*v.auc = ptr(auc)
		*v.aucD = ptr(auc / r.Dose)
		*v.pct = ptr(100 * (auc - r.AUClast) / auc)
		*v.aumc = ptr(aumc)
		*v.aumcPct = ptr(100 * (aumc - r.AUMClast) / aumc)
		*v.mrt = ptr(mrt)
		*v.cl = ptr(r.Dose / auc)
		*v.vz = ptr(r.Dose / (lz * auc))
		if r.Route != RouteExtravascular {
			// Vss = MRT·CL (Gabrielsson & Weiner; PKNCA vss; Phoenix Vss).
			*v.vss = ptr(mrt * r.Dose / auc)
		}
	}
	if *r.AUCPctExtrapObs > ExtrapolationLimitPct {
		r.warn(WarnExtrapolatedOver20, "%.1f%% of AUCinf (observed) is extrapolated beyond Tlast, more than %.0f%%", *r.AUCPctExtrapObs, ExtrapolationLimitPct)
	}
}

func (r *Result) note(code, format string, args ...any) {
	r.Imputations = append(r.Imputations, Note{Code: code, Message: fmt.Sprintf(format, args...)})
}

func (r *Result) warn(code, format string, args ...any) {
	r.Warnings = append(r.Warnings, Note{Code: code, Message: fmt.Sprintf(format, args...)})
}

func ptr(v float64) *float64 { return &v }
