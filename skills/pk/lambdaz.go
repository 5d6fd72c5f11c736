package pk

import (
	"fmt"
	"math"
	"strings"
)

// AdjR2Tolerance is the best-fit rule's tolerance: among the fits whose
// adjusted R² is within this of the highest, the one with the most points wins
// (PKNCA's adj.r.squared.factor, 1e-4; WinNonlin's best-fit rule likewise
// prefers more points among fits within 1e-4).
const AdjR2Tolerance = 1e-4

// Terminal is the terminal-phase fit: ln C = Intercept − LambdaZ·t, by
// least squares over the points listed, weighted as Weighting says.
type Terminal struct {
	// LambdaZ is the terminal rate constant (1/h), minus the fitted slope.
	LambdaZ float64 `json:"lambdaZ"`
	// Intercept is the fitted ln C at t = 0 (ln of mg/L).
	Intercept float64 `json:"intercept"`
	// N is the number of points in the fit; Times and Conc are those points.
	N     int       `json:"n"`
	Times []float64 `json:"times"`
	Conc  []float64 `json:"conc"`
	// R2 is the coefficient of determination; AdjR2 = 1 − (1 − R²)(n − 1)/(n − 2).
	R2    float64 `json:"r2"`
	AdjR2 float64 `json:"adjR2"`
	// CorrXY is the (weighted) correlation of t and ln C over the fit,
	// negative for a falling phase: −√R², Phoenix's Corr_XY.
	CorrXY float64 `json:"corrXY"`
	// HalfLife is t½ = ln 2 / λz (h).
	HalfLife float64 `json:"halfLife"`
	// Span is (last fit time − first fit time) / t½: how many half-lives the fit covers.
	Span float64 `json:"span"`
	// Selection is "best_fit" (the adjusted-R² search), "fixed_points"
	// (Options.LambdaZPoints) or "manual_range" (the caller's Start–End).
	Selection string `json:"selection"`
	// RangeStart and RangeEnd echo a manual range; nil otherwise.
	RangeStart *float64 `json:"rangeStart"`
	RangeEnd   *float64 `json:"rangeEnd"`
	// Weighting is the regression's weighting (uniform, 1/y, 1/y2).
	Weighting string `json:"weighting"`
	// Excluded are the samples the caller kept out of the fit, with reasons.
	Excluded []ExcludedPoint `json:"excluded"`
}

// ExcludedPoint is a sample kept out of the λz fit by the caller.
type ExcludedPoint struct {
	Time   float64 `json:"time"`
	Conc   float64 `json:"conc"`
	Reason string  `json:"reason"`
}

// weight is a point's weight in the λz regression.
func weight(w string, c float64) float64 {
	switch w {
	case WeightInvY:
		return 1 / c
	case WeightInvY2:
		return 1 / (c * c)
	}
	return 1
}

// slope is the least-squares slope of ln c on t over pts (all c > 0), in 1/h.
func slope(pts []point) float64 {
	n := float64(len(pts))
	var mx, my float64
	for _, p := range pts {
		mx += p.t
		my += math.Log(p.c)
	}
	mx /= n
	my /= n
	var sxx, sxy float64
	for _, p := range pts {
		sxx += (p.t - mx) * (p.t - mx)
		sxy += (p.t - mx) * (math.Log(p.c) - my)
	}
	return sxy/sxx + 0 // + 0: a flat fit reads 0, not -0
}

// notEstimable says why no terminal fit qualified, with what was received
// and what to do: the concentrations still rising at the last sample, too
// few samples after the peak, or a slope that is not falling (λz = −slope ≤
// 0) over the points tried (the last n given by lambda_z_points, or the last
// 3, the shortest fit the best-fit rule tries).
func notEstimable(el []point, r *Result, fixed *int) string {
	switch {
	case len(el) == 0 && r.Tmax == r.Tlast:
		return fmt.Sprintf("λz not estimable: the concentrations peak at the last quantifiable sample (Tmax = Tlast = %v h), so the profile has no falling terminal phase; add samples after the peak", r.Tmax)
	case len(el) < 3:
		return fmt.Sprintf("λz not estimable: %d positive sample(s) after Tmax (%v h), fewer than the 3 a terminal fit needs; add samples later in the terminal phase", len(el), r.Tmax)
	}
	n, by := 3, "the last 3 samples after Tmax (the best-fit rule's shortest fit)"
	if fixed != nil {
		n, by = *fixed, fmt.Sprintf("the last %d samples chosen by lambda_z_points", *fixed)
	}
	pts := el[len(el)-n:]
	cs := make([]string, len(pts))
	for i, p := range pts {
		cs[i] = fmt.Sprintf("%v", p.c)
	}
	b := slope(pts)
	msg := fmt.Sprintf("λz not estimable: the terminal phase is not falling: the log-linear fit of %s (t = %v–%v h, C = %s mg/L) has slope %.4g 1/h, so λz = %.4g 1/h ≤ 0",
		by, pts[0].t, pts[len(pts)-1].t, strings.Join(cs, ", "), b, -b+0)
	if fixed == nil {
		msg += fmt.Sprintf(", and no fit of the last 3 to %d samples after Tmax declines", len(el))
		return msg + "; add samples later in the terminal phase, or choose the points with lambda_z_points"
	}
	return msg + "; choose other points with lambda_z_points (or leave it out for the best-fit rule), or add samples later in the terminal phase"
}

// fit regresses ln c on t over pts (all c > 0), weighting each point by
// weight(w, c): weighted means x̄ = Σwx/Σw, ȳ = Σwy/Σw, Sxx = Σw(x − x̄)²,
// Sxy = Σw(x − x̄)(y − ȳ), Syy = Σw(y − ȳ)²; slope = Sxy/Sxx, R² =
// Sxy²/(Sxx·Syy). Uniform weighting is ordinary least squares. ok is false
// when the slope is not negative (no terminal decline).
func fit(pts []point, w string) (tm Terminal, ok bool) {
	n := float64(len(pts))
	var sw, mx, my float64
	for _, p := range pts {
		wt := weight(w, p.c)
		sw += wt
		mx += wt * p.t
		my += wt * math.Log(p.c)
	}
	mx /= sw
	my /= sw
	var sxx, sxy, syy float64
	for _, p := range pts {
		wt := weight(w, p.c)
		dx, dy := p.t-mx, math.Log(p.c)-my
		sxx += wt * dx * dx
		sxy += wt * dx * dy
		syy += wt * dy * dy
	}
	slope := sxy / sxx
	if !(slope < 0) {
		return Terminal{}, false
	}
	r2 := sxy * sxy / (sxx * syy)
	tm = Terminal{
		LambdaZ:   -slope,
		Intercept: my - slope*mx,
		N:         len(pts),
		R2:        r2,
		AdjR2:     1 - (1-r2)*(n-1)/(n-2),
		CorrXY:    sxy / math.Sqrt(sxx*syy),
		HalfLife:  math.Ln2 / -slope,
		Weighting: w,
		Excluded:  []ExcludedPoint{},
	}
	if tm.Weighting == "" {
		tm.Weighting = WeightUniform
	}
	for _, p := range pts {
		tm.Times = append(tm.Times, p.t)
		tm.Conc = append(tm.Conc, p.c)
	}
	tm.Span = (pts[len(pts)-1].t - pts[0].t) / tm.HalfLife
	return tm, true
}

// eligible returns the points λz may use: observed, positive, strictly after
// Tmax and at or before Tlast. The same rule serves both routes: Cmax is never
// in the fit (for an IV bolus Cmax is normally the first sample, so the fit may
// start at the second), nor is an imputed C0.
func eligible(pts []point, imax, ilast int) []point {
	var out []point
	for i := imax + 1; i <= ilast; i++ {
		if pts[i].observed && pts[i].c > 0 {
			out = append(out, pts[i])
		}
	}
	return out
}

// bestFit applies the best-fit rule to the eligible points: fit the last n for
// n = 3, 4, … all; keep the fits with a negative slope; take the highest
// adjusted R², and among the fits within AdjR2Tolerance of it the one with the
// most points. ok is false when no fit qualifies.
func bestFit(el []point, w string) (best Terminal, ok bool) {
	var fits []Terminal
	for n := 3; n <= len(el); n++ {
		if tm, good := fit(el[len(el)-n:], w); good {
			fits = append(fits, tm)
		}
	}
	if len(fits) == 0 {
		return Terminal{}, false
	}
	top := math.Inf(-1)
	for _, f := range fits {
		top = math.Max(top, f.AdjR2)
	}
	for _, f := range fits {
		if f.AdjR2 >= top-AdjR2Tolerance && f.N > best.N {
			best = f
		}
	}
	best.Selection = SelectionBestFit
	return best, true
}
