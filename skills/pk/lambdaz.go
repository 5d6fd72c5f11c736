package pk

import "math"

// AdjR2Tolerance is the best-fit rule's tolerance: among the fits whose
// adjusted R² is within this of the highest, the one with the most points wins
// (PKNCA's adj.r.squared.factor, 1e-4; WinNonlin's best-fit rule likewise
// prefers more points among fits within 1e-4).
const AdjR2Tolerance = 1e-4

// Terminal is the terminal-phase fit: ln C = Intercept − LambdaZ·t, by
// unweighted least squares over the points listed.
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
	// HalfLife is t½ = ln 2 / λz (h).
	HalfLife float64 `json:"halfLife"`
	// Span is (last fit time − first fit time) / t½: how many half-lives the fit covers.
	Span float64 `json:"span"`
	// Selection is "best_fit" (the adjusted-R² search) or "fixed_points"
	// (Options.LambdaZPoints).
	Selection string `json:"selection"`
}

// fit regresses ln c on t over pts (all c > 0). ok is false when the slope is
// not negative (no terminal decline).
func fit(pts []point) (tm Terminal, ok bool) {
	n := float64(len(pts))
	var mx, my float64
	for _, p := range pts {
		mx += p.t
		my += math.Log(p.c)
	}
	mx /= n
	my /= n
	var sxx, sxy, syy float64
	for _, p := range pts {
		dx, dy := p.t-mx, math.Log(p.c)-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
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
		HalfLife:  math.Ln2 / -slope,
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
func bestFit(el []point) (best Terminal, ok bool) {
	var fits []Terminal
	for n := 3; n <= len(el); n++ {
		if tm, good := fit(el[len(el)-n:]); good {
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
