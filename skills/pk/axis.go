package pk

import (
	"math"
	"strconv"
)

// tick is one labelled (or, when minor, unlabelled) position on an axis.
type tick struct {
	v     float64
	label string
	minor bool
}

// linearTicks returns ticks from 0 to the first "nice" value (1, 2 or 5 × 10^k
// steps, about five of them) at or above max. Ticks are i·step, never summed,
// so they do not drift.
func linearTicks(max float64) (top float64, ticks []tick) {
	if !(max > 0) {
		max = 1
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, f := range []float64{1, 2, 5} {
		if f*mag >= raw {
			step = f * mag
			break
		}
	}
	n := int(math.Ceil(max/step - 1e-9))
	for i := 0; i <= n; i++ {
		v := float64(i) * step
		ticks = append(ticks, tick{v: v, label: num(v)})
	}
	return float64(n) * step, ticks
}

// logTicks returns the decades spanning [min, max] (min > 0), labelled, with
// unlabelled minor ticks at 2..9 × 10^k.
func logTicks(min, max float64) (lo, hi int, ticks []tick) {
	lo = int(math.Floor(math.Log10(min)))
	hi = int(math.Ceil(math.Log10(max)))
	if hi <= lo {
		hi = lo + 1
	}
	for k := lo; k <= hi; k++ {
		d := math.Pow(10, float64(k))
		ticks = append(ticks, tick{v: d, label: num(d)})
		if k == hi {
			break
		}
		for m := 2; m <= 9; m++ {
			ticks = append(ticks, tick{v: float64(m) * d, minor: true})
		}
	}
	return lo, hi, ticks
}

// num formats a tick label: up to four significant digits, no exponent for
// the usual ranges.
func num(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// coord formats an SVG coordinate with two decimals, so output is byte-stable.
func coord(v float64) string {
	return strconv.FormatFloat(v, 'f', 2, 64)
}
