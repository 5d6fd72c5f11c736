// Package svgplot draws plots as self-contained SVG: axes with "nice" linear
// or logarithmic ticks, coordinates formatted so the same input gives the
// same bytes, and every text escaped (a label reading <script> is drawn as
// those characters, never as markup). It is the drawing shared by pk.nca's
// concentration-time figure (skills/pk) and figure.generate (tools/figure);
// it knows nothing of artifacts.
package svgplot

import (
	"encoding/xml"
	"math"
	"strconv"
	"strings"
)

// Tick is one labelled (or, when Minor, unlabelled) position on an axis.
type Tick struct {
	V     float64
	Label string
	Minor bool
}

// LinearTicks returns ticks from 0 to the first "nice" value (1, 2 or 5 × 10^k
// steps, about five of them) at or above max. Ticks are i·step, never summed,
// so they do not drift.
func LinearTicks(max float64) (top float64, ticks []Tick) {
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
		ticks = append(ticks, Tick{V: v, Label: Num(v)})
	}
	return float64(n) * step, ticks
}

// RangeTicks returns nice ticks spanning [min, max], which may be negative:
// from the nice value at or below min to the one at or above max.
func RangeTicks(min, max float64) (lo, hi float64, ticks []Tick) {
	if min >= 0 {
		top, t := LinearTicks(max)
		return 0, top, t
	}
	if !(max > min) {
		max = min + 1
	}
	raw := (max - min) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, f := range []float64{1, 2, 5} {
		if f*mag >= raw {
			step = f * mag
			break
		}
	}
	i0 := int(math.Floor(min/step + 1e-9))
	i1 := int(math.Ceil(max/step - 1e-9))
	for i := i0; i <= i1; i++ {
		v := float64(i) * step
		ticks = append(ticks, Tick{V: v, Label: Num(v)})
	}
	return float64(i0) * step, float64(i1) * step, ticks
}

// LogTicks returns the decades spanning [min, max] (min > 0), labelled, with
// unlabelled minor ticks at 2..9 × 10^k.
func LogTicks(min, max float64) (lo, hi int, ticks []Tick) {
	lo = int(math.Floor(math.Log10(min)))
	hi = int(math.Ceil(math.Log10(max)))
	if hi <= lo {
		hi = lo + 1
	}
	for k := lo; k <= hi; k++ {
		d := math.Pow(10, float64(k))
		ticks = append(ticks, Tick{V: d, Label: Num(d)})
		if k == hi {
			break
		}
		for m := 2; m <= 9; m++ {
			ticks = append(ticks, Tick{V: float64(m) * d, Minor: true})
		}
	}
	return lo, hi, ticks
}

// Num formats a tick label: up to four significant digits, no exponent for
// the usual ranges.
func Num(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Coord formats an SVG coordinate with two decimals, so output is byte-stable.
func Coord(v float64) string {
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// Esc escapes s as XML character data (and attribute text): <, >, &, quotes,
// and the control characters XML cannot hold.
func Esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
