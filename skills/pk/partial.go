package pk

import (
	"fmt"
	"math"
)

// PartialAUC is AUC from Start to End (h), with the rules it was computed by.
type PartialAUC struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// AUC is nil when the interval reaches past Tlast and extrapolation is
	// "none" or λz is not estimable; Note says why.
	AUC *float64 `json:"auc"`
	// Interpolation is the rule between samples (linear, or
	// linear_up_log_down: log where the concentration falls); Extrapolation
	// the rule after Tlast (lambda_z or none).
	Interpolation string `json:"interpolation"`
	Extrapolation string `json:"extrapolation"`
	// Extrapolated is true when part of the interval lies after Tlast.
	Extrapolated bool   `json:"extrapolated"`
	Note         string `json:"note,omitempty"`
}

// curve reads the concentration at any time from the samples up to Tlast
// and, after Tlast, from the terminal fit.
type curve struct {
	pts          []point // pts[0].t = 0, up to and including Tlast
	tlast, clast float64
	tm           *Terminal
}

func (r *Result) curve(pts []point, ilast int) curve {
	return curve{pts: pts[:ilast+1], tlast: r.Tlast, clast: r.Clast, tm: r.Terminal}
}

// at is C(t) for 0 ≤ t ≤ Tlast: a sample's value, or interpolated between
// the samples around t, linearly or (linear_up_log_down, falling, both
// positive) log-linearly: C = C1·(C2/C1)^((t − t1)/(t2 − t1)).
func (c curve) at(t float64, method string) float64 {
	for i := 1; i < len(c.pts); i++ {
		a, b := c.pts[i-1], c.pts[i]
		if t > b.t {
			continue
		}
		if t == b.t {
			return b.c
		}
		f := (t - a.t) / (b.t - a.t)
		if method == AUCLinearUpLogDown && b.c < a.c && b.c > 0 {
			return a.c * math.Pow(b.c/a.c, f)
		}
		return a.c + (b.c-a.c)*f
	}
	return c.pts[0].c
}

// extrap is C(t) = Clast·e^(−λz(t − Tlast)) for t ≥ Tlast; ok is false
// without λz.
func (c curve) extrap(t float64) (float64, bool) {
	if c.tm == nil {
		return 0, false
	}
	return c.clast * math.Exp(-c.tm.LambdaZ*(t-c.tlast)), true
}

// conc is C(t) at any t ≥ 0 under the rules; ok is false past Tlast when
// it cannot be extrapolated.
func (c curve) conc(t float64, method, extrap string) (float64, bool) {
	if t <= c.tlast {
		return c.at(t, method), true
	}
	if extrap == ExtrapNone {
		return 0, false
	}
	return c.extrap(t)
}

// area integrates C from a to b (0 ≤ a < b): up to Tlast over the samples
// in between and the interpolated ends, each piece by segment with method;
// after Tlast the exponential exactly, ∫ Clast·e^(−λz(t−Tlast)) dt =
// (C(a') − C(b))/λz with a' = max(a, Tlast). why says what is missing when
// ok is false.
func (c curve) area(a, b float64, method, extrap string) (auc float64, ok bool, why string) {
	if a < c.tlast {
		hi := math.Min(b, c.tlast)
		t0, c0 := a, c.at(a, method)
		for _, p := range c.pts {
			if p.t <= a || p.t >= hi {
				continue
			}
			s, _ := segment(method, t0, c0, p.t, p.c)
			auc += s
			t0, c0 = p.t, p.c
		}
		s, _ := segment(method, t0, c0, hi, c.at(hi, method))
		auc += s
	}
	if b <= c.tlast {
		return auc, true, ""
	}
	if extrap == ExtrapNone {
		return 0, false, fmt.Sprintf("the interval ends after Tlast (%v h) and extrapolation is %q", c.tlast, ExtrapNone)
	}
	if c.tm == nil {
		return 0, false, fmt.Sprintf("the interval ends after Tlast (%v h) and λz is not estimable", c.tlast)
	}
	lo := math.Max(a, c.tlast)
	ca, _ := c.extrap(lo)
	cb, _ := c.extrap(b)
	return auc + (ca-cb)/c.tm.LambdaZ, true, ""
}

// partials computes the requested partial AUCs.
func (r *Result) partials(cv curve, method string, reqs []PartialAUCRequest) {
	r.PartialAUCs = []PartialAUC{}
	for _, q := range reqs {
		pa := PartialAUC{Start: q.Start, End: q.End, Interpolation: q.Interpolation, Extrapolation: q.Extrapolation}
		if pa.Interpolation == "" {
			pa.Interpolation = method
		}
		if pa.Extrapolation == "" {
			pa.Extrapolation = ExtrapLambdaZ
		}
		pa.Extrapolated = q.End > r.Tlast
		if v, ok, why := cv.area(q.Start, q.End, pa.Interpolation, pa.Extrapolation); ok {
			pa.AUC = ptr(v)
		} else {
			pa.Note = "not computed: " + why
		}
		r.PartialAUCs = append(r.PartialAUCs, pa)
	}
}

// Interval is one dosing interval [Start, Start + Tau] and its
// steady-state parameters (Phoenix's and PKNCA's definitions):
// AUCtau = ∫ C dt over the interval (the AUC method between samples, λz
// after Tlast), Cmax/Tmax and Cmin over the observed samples in it
// (both ends included), Ctau = C(Start + Tau) (observed, interpolated or
// extrapolated), Cavg = AUCtau/Tau, fluctuation = 100·(Cmax − Cmin)/Cavg %,
// swing = (Cmax − Cmin)/Cmin, CLss = Dose/AUCtau (CLss/F extravascular) and
// the accumulation index 1/(1 − e^(−λz·Tau)) from the profile's λz.
type Interval struct {
	Start        float64  `json:"start"`
	End          float64  `json:"end"`
	Tau          float64  `json:"tau"`
	AUCtau       *float64 `json:"auctau"`
	Cmax         *float64 `json:"cmax"`
	Tmax         *float64 `json:"tmax"`
	Cmin         *float64 `json:"cmin"`
	Ctau         *float64 `json:"ctau"`
	Cavg         *float64 `json:"cavg"`
	Fluctuation  *float64 `json:"fluctuationPct"`
	Swing        *float64 `json:"swing"`
	CLss         *float64 `json:"clss"`
	Accumulation *float64 `json:"accumulationIndex"`
	// Extrapolated is true when the interval ends after Tlast (AUCtau and
	// Ctau then use λz).
	Extrapolated bool   `json:"extrapolated"`
	Note         string `json:"note,omitempty"`
}

// intervals computes each dose's interval.
func (r *Result) intervals(cv curve, p Profile, pts []point, method string) {
	if p.Tau == nil {
		return
	}
	tau := *p.Tau
	doses := p.DoseTimes
	if len(doses) == 0 {
		doses = []float64{0}
	}
	r.Intervals = []Interval{}
	for _, d := range doses {
		iv := Interval{Start: d, End: d + tau, Tau: tau, Extrapolated: d+tau > r.Tlast}
		for _, q := range pts {
			if !q.observed || q.t < d || q.t > d+tau {
				continue
			}
			if iv.Cmax == nil || q.c > *iv.Cmax {
				iv.Cmax, iv.Tmax = ptr(q.c), ptr(q.t)
			}
			if iv.Cmin == nil || q.c < *iv.Cmin {
				iv.Cmin = ptr(q.c)
			}
		}
		if c, ok := cv.conc(d+tau, method, ExtrapLambdaZ); ok {
			iv.Ctau = ptr(c)
		}
		if a, ok, why := cv.area(d, d+tau, method, ExtrapLambdaZ); ok {
			iv.AUCtau = ptr(a)
			iv.Cavg = ptr(a / tau)
			iv.CLss = ptr(r.Dose / a)
			if iv.Cmax != nil && a > 0 {
				iv.Fluctuation = ptr(100 * (*iv.Cmax - *iv.Cmin) / (a / tau))
			}
		} else {
			iv.Note = "AUCtau, Cavg, fluctuation and CLss not computed: " + why
		}
		if iv.Cmax == nil {
			iv.Note = fmt.Sprintf("no observed sample in [%v, %v] h: Cmax, Cmin and swing not computed", d, d+tau)
		} else if *iv.Cmin > 0 {
			iv.Swing = ptr((*iv.Cmax - *iv.Cmin) / *iv.Cmin)
		}
		if r.Terminal != nil {
			iv.Accumulation = ptr(1 / (1 - math.Exp(-r.Terminal.LambdaZ*tau)))
		}
		r.Intervals = append(r.Intervals, iv)
	}
}

// UrineResult is the urinary excretion: per collection Ae = volume·conc
// (mg) and the excretion rate Ae/(end − start) at the midpoint; in total
// Ae (the sum), fe = Ae/Dose (of one dose) and CLr = Ae/AUC(first start,
// last end) over the plasma profile (the AUC method; λz after Tlast).
type UrineResult struct {
	Collections []UrineInterval `json:"collections"`
	Ae          float64         `json:"ae"`
	Fe          float64         `json:"fe"`
	// AUC is the plasma AUC over the collection span; CLr is nil without it.
	Start float64  `json:"start"`
	End   float64  `json:"end"`
	AUC   *float64 `json:"auc"`
	CLr   *float64 `json:"clr"`
	Note  string   `json:"note,omitempty"`
}

// UrineInterval is one collection's amount excreted.
type UrineInterval struct {
	Start    float64 `json:"start"`
	End      float64 `json:"end"`
	Midpoint float64 `json:"midpoint"`
	Ae       float64 `json:"ae"`
	Rate     float64 `json:"rate"`
	AeCum    float64 `json:"aeCumulative"`
}

func (r *Result) urine(cv curve, us []UrineCollection, method string) {
	if len(us) == 0 {
		return
	}
	u := &UrineResult{Collections: []UrineInterval{}, Start: us[0].Start, End: us[len(us)-1].End}
	for _, c := range us {
		ae := c.Volume * c.Conc
		u.Ae += ae
		u.Collections = append(u.Collections, UrineInterval{Start: c.Start, End: c.End, Midpoint: (c.Start + c.End) / 2,
			Ae: ae, Rate: ae / (c.End - c.Start), AeCum: u.Ae})
	}
	u.Fe = u.Ae / r.Dose
	if a, ok, why := cv.area(u.Start, u.End, method, ExtrapLambdaZ); ok && a > 0 {
		u.AUC, u.CLr = ptr(a), ptr(u.Ae/a)
	} else if !ok {
		u.Note = "CLr not computed: " + why
	}
	r.Urine = u
}
