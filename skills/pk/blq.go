package pk

// The rules for concentrations below the limit of quantification (BLQ: a
// value < LLOQ). "First" and "last" mean the first and last quantifiable
// (≥ LLOQ) samples; "zero" means the sample is kept with concentration 0,
// "excluded" means it is dropped from every calculation.
const (
	// BLQZero sets every BLQ value to 0.
	BLQZero = "zero"
	// BLQMissing excludes every BLQ value.
	BLQMissing = "missing"
	// BLQZeroBeforeTmaxMissingAfter sets BLQ values before Tmax (of the
	// quantifiable samples) to 0 and excludes those after it.
	BLQZeroBeforeTmaxMissingAfter = "zero_before_tmax_missing_after"
	// BLQZeroLeadingTrailingMissingMiddle sets BLQ values before the first and
	// after the last quantifiable sample to 0 and excludes those between them
	// (PKNCA's default conc.blq handling: first = keep, middle = drop,
	// last = keep). The trailing zeros make AUCall differ from AUClast.
	BLQZeroLeadingTrailingMissingMiddle = "zero_leading_trailing_missing_middle"
)

// BLQRules lists the supported BLQ rules.
var BLQRules = []string{BLQZero, BLQMissing, BLQZeroBeforeTmaxMissingAfter, BLQZeroLeadingTrailingMissingMiddle}

func knownBLQRule(r string) bool {
	for _, k := range BLQRules {
		if k == r {
			return true
		}
	}
	return false
}

// point is one sample after BLQ handling. observed is false for the imputed
// concentration at t = 0.
type point struct {
	t, c     float64
	observed bool
}

// applyBLQ returns the samples after the profile's BLQ rule, and how many were
// set to zero and how many excluded. Input is validated.
func applyBLQ(p Profile) (pts []point, zeroed, excluded int) {
	blq := func(c float64) bool { return p.LLOQ != nil && c < *p.LLOQ }
	first, last, imax := -1, -1, -1
	for i, c := range p.Conc {
		if blq(c) {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
		if imax < 0 || c > p.Conc[imax] {
			imax = i
		}
	}
	for i, c := range p.Conc {
		if !blq(c) {
			pts = append(pts, point{t: p.Times[i], c: c, observed: true})
			continue
		}
		keep := false
		switch p.BLQRule {
		case BLQZero:
			keep = true
		case BLQMissing:
			keep = false
		case BLQZeroBeforeTmaxMissingAfter:
			keep = imax < 0 || i < imax
		case BLQZeroLeadingTrailingMissingMiddle:
			keep = first < 0 || i < first || i > last
		}
		if keep {
			pts = append(pts, point{t: p.Times[i], c: 0, observed: true})
			zeroed++
		} else {
			excluded++
		}
	}
	return pts, zeroed, excluded
}
