package pk

import "math"

// naiveNCA is a second, deliberately plain implementation of the same NCA for
// an extravascular profile whose first sample is at t = 0 with no BLQ values
// (the theophylline data), written from the textbook formulas without looking
// at or calling the package's code: running sums over arrays, the regression
// from raw sums (n·Σxy − Σx·Σy)/(n·Σx² − (Σx)²), R² from residuals
// 1 − SSres/SStot. It returns the parameters under the names params uses.
func naiveNCA(ts, cs []float64, dose float64, logDown bool) map[string]float64 {
	out := map[string]float64{}
	n := len(ts)
	imax := 0
	for i := range cs {
		if cs[i] > cs[imax] {
			imax = i
		}
	}
	ilast := n - 1
	for cs[ilast] <= 0 {
		ilast--
	}
	out["cmax"], out["tmax"], out["clast"], out["tlast"], out["c0"] = cs[imax], ts[imax], cs[ilast], ts[ilast], cs[0]
	out["cmaxd"] = cs[imax] / dose
	// Tlag: the time before the first positive sample (0 if it is the first).
	out["tlag"] = 0
	for i := range cs {
		if cs[i] > 0 {
			if i > 0 {
				out["tlag"] = ts[i-1]
			}
			break
		}
	}

	auc := make([]float64, n)  // cumulative AUC from t0
	aumc := make([]float64, n) // cumulative AUMC from t0
	for i := 1; i < n; i++ {
		h := ts[i] - ts[i-1]
		a, b := cs[i-1], cs[i]
		if logDown && b < a && b > 0 {
			k := (math.Log(a) - math.Log(b)) / h // the interval's rate constant
			auc[i] = auc[i-1] + (a-b)/k
			// ∫ t·a·e^{−k(t−t1)} dt over the interval, by parts.
			aumc[i] = aumc[i-1] + (ts[i-1]*a-ts[i]*b)/k + (a-b)/(k*k)
		} else {
			auc[i] = auc[i-1] + h*(a+b)/2
			aumc[i] = aumc[i-1] + h*(ts[i-1]*a+ts[i]*b)/2
		}
	}
	out["auclast"], out["aucall"], out["aumclast"] = auc[ilast], auc[n-1], aumc[ilast]
	out["mrtlast"] = aumc[ilast] / auc[ilast]
	out["auclastd"] = auc[ilast] / dose

	// λz: every window ending at Tlast, starting after Tmax, with ≥ 3 points.
	type cand struct {
		slope, icpt, r2, adj, r float64
		k                       int
	}
	var cands []cand
	for start := imax + 1; start <= ilast-2; start++ {
		var sx, sy, sxx, sxy float64
		k := 0
		for i := start; i <= ilast; i++ {
			x, y := ts[i], math.Log(cs[i])
			sx += x
			sy += y
			sxx += x * x
			sxy += x * y
			k++
		}
		fk := float64(k)
		slope := (fk*sxy - sx*sy) / (fk*sxx - sx*sx)
		icpt := (sy - slope*sx) / fk
		var ssres, sstot float64
		for i := start; i <= ilast; i++ {
			y := math.Log(cs[i])
			ssres += (y - (icpt + slope*ts[i])) * (y - (icpt + slope*ts[i]))
			sstot += (y - sy/fk) * (y - sy/fk)
		}
		r2 := 1 - ssres/sstot
		// Pearson's r from the raw sums, Σy² as well.
		var syy float64
		for i := start; i <= ilast; i++ {
			syy += math.Log(cs[i]) * math.Log(cs[i])
		}
		r := (fk*sxy - sx*sy) / math.Sqrt((fk*sxx-sx*sx)*(fk*syy-sy*sy))
		if slope < 0 {
			cands = append(cands, cand{slope, icpt, r2, 1 - (1-r2)*(fk-1)/(fk-2), r, k})
		}
	}
	if len(cands) == 0 {
		return out
	}
	best := cands[0]
	for _, c := range cands {
		if c.adj > best.adj {
			best = c
		}
	}
	pick := best
	for _, c := range cands {
		if c.adj >= best.adj-1e-4 && c.k > pick.k {
			pick = c
		}
	}
	lz := -pick.slope
	out["corrxy"] = pick.r
	out["lambdaz"], out["lambdazn"], out["r2"], out["adjr2"], out["intercept"] = lz, float64(pick.k), pick.r2, pick.adj, pick.icpt
	out["halflife"] = math.Log(2) / lz
	out["lambdaztfirst"] = ts[ilast-pick.k+1]
	out["span"] = (ts[ilast] - ts[ilast-pick.k+1]) / out["halflife"]
	pred := math.Exp(pick.icpt - lz*ts[ilast])
	out["clastpred"] = pred
	for suffix, cl := range map[string]float64{"obs": cs[ilast], "pred": pred} {
		ai := auc[ilast] + cl/lz
		mi := aumc[ilast] + cl*ts[ilast]/lz + cl/(lz*lz)
		out["aucinf"+suffix] = ai
		out["aucpctextrap"+suffix] = (ai - auc[ilast]) / ai * 100
		out["aumcinf"+suffix] = mi
		out["aucinf"+suffix+"d"] = ai / dose
		out["aumcpctextrap"+suffix] = (mi - aumc[ilast]) / mi * 100
		out["mrtinf"+suffix] = mi / ai
		out["cl"+suffix] = dose / ai
		out["vz"+suffix] = dose / lz / ai
	}
	return out
}

// naivePartialAUC is AUC(a, b) as the difference of two cumulative areas
// from t = 0 (the package integrates the interval directly): cum(x) is the
// cumulative AUC at the last sample ≤ x plus the piece from there to x, the
// concentration at x read off the chord (linear) or the exponential through
// the two samples (log down, falling). After tlast, C = clast·e^(−lz(t−tlast)).
func naivePartialAUC(ts, cs []float64, a, b float64, logDown bool, lz float64) float64 {
	ilast := len(cs) - 1
	for cs[ilast] <= 0 {
		ilast--
	}
	piece := func(t1, c1, t2, c2 float64) float64 {
		if logDown && c2 < c1 && c2 > 0 {
			return (t2 - t1) * (c1 - c2) / math.Log(c1/c2)
		}
		return (t2 - t1) * (c1 + c2) / 2
	}
	cum := func(x float64) float64 {
		total := 0.0
		for i := 1; i <= ilast; i++ {
			if ts[i] <= x {
				total += piece(ts[i-1], cs[i-1], ts[i], cs[i])
				continue
			}
			if x > ts[i-1] {
				f := (x - ts[i-1]) / (ts[i] - ts[i-1])
				cx := cs[i-1] + f*(cs[i]-cs[i-1])
				if logDown && cs[i] < cs[i-1] && cs[i] > 0 {
					cx = math.Exp(math.Log(cs[i-1]) + f*(math.Log(cs[i])-math.Log(cs[i-1])))
				}
				total += piece(ts[i-1], cs[i-1], x, cx)
			}
			return total
		}
		// Past tlast: the whole observed area plus the exponential tail.
		return total + cs[ilast]/lz*(1-math.Exp(-lz*(x-ts[ilast])))
	}
	return cum(b) - cum(a)
}
