package pk

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/scidex/substrate/internal/svgplot"
	"github.com/scidex/substrate/skills/problem"
)

// AxisUnits names the units of the profile's and result's numbers on the
// figure's axes; the numbers are drawn as they are, so the units must be the
// ones they are in (canonical: [CanonicalAxisUnits]).
type AxisUnits struct {
	Time          string `json:"time"`
	Concentration string `json:"concentration"`
}

// CanonicalAxisUnits are the units NCA computes in.
var CanonicalAxisUnits = AxisUnits{Time: "h", Concentration: "mg/L"}

// Figure geometry, in SVG user units (the viewBox is 0 0 figW figH).
const (
	figW, figH       = 960.0, 460.0
	panelW           = figW / 2
	plotLeft         = 72.0  // from the panel's left edge
	plotRight        = 456.0 // from the panel's left edge
	plotTop, plotBot = 78.0, 380.0
)

// FigureSVG draws the profile and its NCA as a self-contained SVG (no
// external assets, no scripts): a title, the concentration-time profile on a
// linear scale (left) and a log scale (right), axes with ticks and labels
// with units. On the log panel the λz points are circled (class
// "lambda-z-point", each with a <title> giving its time and concentration) and
// the fitted terminal line ln C = intercept − λz·t is drawn over the fit
// interval (class "lambda-z-fit"), the fitted range is shaded (class
// "lambda-z-range", the caller's range or the fit's first to last point) and
// each sample the caller excluded from the fit is crossed out (class
// "lambda-z-excluded", its <title> giving the reason). Samples below LLOQ are drawn hollow on the
// linear panel and left off the log panel, as are zeros. The output depends
// only on the arguments: the same input gives the same bytes.
func FigureSVG(p Profile, r *Result, units AxisUnits) ([]byte, error) {
	var ps problem.List
	if r == nil {
		ps.Add("result", CodeResultMissing, nil, "is missing: expected the NCA result of this profile")
		return nil, ps.Err(procedure)
	}
	ps = validate(p, Options{AUCMethod: r.Method}, "")
	if r.Subject != p.Subject || r.Route != p.Route {
		ps.Add("result", CodeResultProfileMismatch, r.Subject, "is for subject %q (%s), not the profile's %q (%s)", r.Subject, r.Route, p.Subject, p.Route)
	}
	checkUnit(&ps, "units.time", units.Time)
	checkUnit(&ps, "units.concentration", units.Concentration)
	if err := ps.Err(procedure); err != nil {
		return nil, err
	}

	blq := func(c float64) bool { return p.LLOQ != nil && c < *p.LLOQ }
	tmax, cmax, cminPos := 0.0, 0.0, math.Inf(1)
	for i, t := range p.Times {
		tmax = math.Max(tmax, t)
		c := p.Conc[i]
		cmax = math.Max(cmax, c)
		if c > 0 && !blq(c) {
			cminPos = math.Min(cminPos, c)
		}
	}
	ttop, tticks := linearTicks(tmax)
	// The fitted line runs from the first λz point to the end of the time
	// axis, so it shows beside the samples it was fitted to.
	var fitT0, fitT1, fitC0, fitC1 float64
	tm := r.Terminal
	if tm != nil {
		fitT0, fitT1 = tm.Times[0], ttop
		fitC0, fitC1 = math.Exp(tm.Intercept-tm.LambdaZ*fitT0), math.Exp(tm.Intercept-tm.LambdaZ*fitT1)
		cminPos = math.Min(cminPos, math.Min(fitC0, fitC1))
		cmax = math.Max(cmax, math.Max(fitC0, fitC1))
	}
	if math.IsInf(cminPos, 1) { // nothing positive to draw on the log panel
		cminPos = 1
	}
	ctop, cticks := linearTicks(cmax)
	lo, hi, lticks := logTicks(cminPos, cmax)

	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	w(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="sans-serif" font-size="12">`+"\n",
		coord(figW), coord(figH), coord(figW), coord(figH))
	w(`<rect x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`+"\n", coord(figW), coord(figH))
	title := "Concentration-time profile"
	if p.Subject != "" {
		title += ", subject " + p.Subject
	}
	title += fmt.Sprintf(" (%s; AUC %s)", p.Route, r.Method)
	w(`<text class="title" x="%s" y="26" text-anchor="middle" font-size="16" font-weight="bold">%s</text>`+"\n", coord(figW/2), esc(title))
	sub := "λz not estimable"
	if tm != nil {
		sub = fmt.Sprintf("λz = %s /%s from %d points (%s), adj. R² = %.4f, t½ = %s %s",
			num(tm.LambdaZ), units.Time, tm.N, tm.Selection, tm.AdjR2, num(tm.HalfLife), units.Time)
		if tm.RangeStart != nil {
			sub += fmt.Sprintf(", range %s–%s %s", num(*tm.RangeStart), num(*tm.RangeEnd), units.Time)
		}
		if tm.Weighting != "" && tm.Weighting != WeightUniform {
			sub += ", weighted " + tm.Weighting
		}
		if len(tm.Excluded) > 0 {
			sub += fmt.Sprintf(", %d excluded", len(tm.Excluded))
		}
	}
	w(`<text class="subtitle" x="%s" y="46" text-anchor="middle">%s</text>`+"\n", coord(figW/2), esc(sub))

	xlabel := fmt.Sprintf("Time (%s)", units.Time)
	ylabel := fmt.Sprintf("Concentration (%s)", units.Concentration)
	for panel := 0; panel < 2; panel++ {
		x0 := float64(panel) * panelW
		px := func(t float64) float64 { return x0 + plotLeft + (plotRight-plotLeft)*t/ttop }
		var py func(c float64) float64
		var yticks []svgplot.Tick
		name := "linear"
		if panel == 0 {
			py = func(c float64) float64 { return plotBot - (plotBot-plotTop)*c/ctop }
			yticks = cticks
		} else {
			name = "log"
			py = func(c float64) float64 {
				return plotBot - (plotBot-plotTop)*(math.Log10(c)-float64(lo))/float64(hi-lo)
			}
			yticks = lticks
		}
		w(`<g class="panel panel-%s">`+"\n", name)
		w(`<text class="panel-title" x="%s" y="66" text-anchor="middle" font-weight="bold">%s scale</text>`+"\n",
			coord(x0+(plotLeft+plotRight)/2), map[string]string{"linear": "Linear", "log": "Logarithmic"}[name])
		w(`<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#000000"/>`+"\n",
			coord(x0+plotLeft), coord(plotTop), coord(plotRight-plotLeft), coord(plotBot-plotTop))
		for _, tk := range tticks {
			x := px(tk.V)
			w(`<line class="tick" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#000000"/>`+"\n", coord(x), coord(plotBot), coord(x), coord(plotBot+5))
			w(`<text class="tick-label" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", coord(x), coord(plotBot+18), esc(tk.Label))
		}
		for _, tk := range yticks {
			y := py(tk.V)
			size := 5.0
			if tk.Minor {
				size = 3
			}
			w(`<line class="tick" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#000000"/>`+"\n", coord(x0+plotLeft-size), coord(y), coord(x0+plotLeft), coord(y))
			if !tk.Minor {
				w(`<text class="tick-label" x="%s" y="%s" text-anchor="end">%s</text>`+"\n", coord(x0+plotLeft-8), coord(y+4), esc(tk.Label))
			}
		}
		w(`<text class="axis-label" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", coord(x0+(plotLeft+plotRight)/2), coord(plotBot+42), esc(xlabel))
		ly := (plotTop + plotBot) / 2
		w(`<text class="axis-label" x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)">%s</text>`+"\n",
			coord(x0+20), coord(ly), coord(x0+20), coord(ly), esc(ylabel))

		// The samples, joined in time order (the log panel skips zeros and BLQ).
		var line []string
		var dots bytes.Buffer
		for i, t := range p.Times {
			c := p.Conc[i]
			hollow := blq(c)
			if panel == 1 && (hollow || c <= 0) {
				continue
			}
			x, y := coord(px(t)), coord(py(c))
			if !hollow {
				line = append(line, x+","+y)
			}
			fill, class := "#1f4e9c", "sample"
			if hollow {
				fill, class = "none", "sample sample-blq"
			}
			fmt.Fprintf(&dots, `<circle class="%s" cx="%s" cy="%s" r="3.5" fill="%s" stroke="#1f4e9c"/>`+"\n", class, x, y, fill)
		}
		if len(line) > 1 {
			w(`<polyline class="profile" points="%s" fill="none" stroke="#1f4e9c" stroke-width="1.5"/>`+"\n", strings.Join(line, " "))
		}
		b.Write(dots.Bytes())
		if panel == 1 && tm != nil {
			lx, ly := x0+plotRight-150, plotTop+16
			w(`<g class="legend"><circle cx="%s" cy="%s" r="3.5" fill="#1f4e9c"/><text x="%s" y="%s">sample</text>`+
				`<circle cx="%s" cy="%s" r="7" fill="none" stroke="#c0392b" stroke-width="2"/><text x="%s" y="%s">λz point</text>`+
				`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#c0392b" stroke-width="2" stroke-dasharray="6 3"/><text x="%s" y="%s">terminal fit</text></g>`+"\n",
				coord(lx), coord(ly), coord(lx+12), coord(ly+4),
				coord(lx), coord(ly+18), coord(lx+12), coord(ly+22),
				coord(lx-8), coord(ly+36), coord(lx+8), coord(ly+36), coord(lx+12), coord(ly+40))
			// The fitted range: the caller's, or the fit's first to last point.
			r0, r1 := tm.Times[0], tm.Times[len(tm.Times)-1]
			if tm.RangeStart != nil {
				r0, r1 = math.Max(0, *tm.RangeStart), math.Min(ttop, *tm.RangeEnd)
			}
			w(`<rect class="lambda-z-range" x="%s" y="%s" width="%s" height="%s" fill="#c0392b" fill-opacity="0.08"><title>%s</title></rect>`+"\n",
				coord(px(r0)), coord(plotTop), coord(math.Max(1, px(r1)-px(r0))), coord(plotBot-plotTop),
				esc(fmt.Sprintf("λz range: %s–%s %s (%s, weighting %s)", num(r0), num(r1), units.Time, tm.Selection, tm.Weighting)))
			for _, x := range tm.Excluded {
				if x.Conc <= 0 {
					continue
				}
				cx, cy := px(x.Time), py(x.Conc)
				w(`<path class="lambda-z-excluded" d="M%s %sL%s %sM%s %sL%s %s" stroke="#7f8c8d" stroke-width="2"><title>%s</title></path>`+"\n",
					coord(cx-6), coord(cy-6), coord(cx+6), coord(cy+6), coord(cx-6), coord(cy+6), coord(cx+6), coord(cy-6),
					esc(fmt.Sprintf("excluded from λz: t = %s %s, C = %s %s: %s", num(x.Time), units.Time, num(x.Conc), units.Concentration, x.Reason)))
			}
			w(`<line class="lambda-z-fit" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#c0392b" stroke-width="2" stroke-dasharray="6 3"/>`+"\n",
				coord(px(fitT0)), coord(py(fitC0)), coord(px(fitT1)), coord(py(fitC1)))
			for i, t := range tm.Times {
				w(`<circle class="lambda-z-point" cx="%s" cy="%s" r="7" fill="none" stroke="#c0392b" stroke-width="2"><title>%s</title></circle>`+"\n",
					coord(px(t)), coord(py(tm.Conc[i])), esc(fmt.Sprintf("λz point: t = %s %s, C = %s %s", num(t), units.Time, num(tm.Conc[i]), units.Concentration)))
			}
		}
		w("</g>\n")
	}
	w("</svg>\n")
	return b.Bytes(), nil
}

// checkUnit refuses an empty or unprintable unit label.
func checkUnit(ps *problem.List, path, u string) {
	if strings.TrimSpace(u) == "" {
		ps.Add(path, CodeUnitRequired, u, "is empty: expected the unit the numbers are in (for example %q)", "h")
		return
	}
	for _, r := range u {
		if !unicode.IsPrint(r) {
			ps.Add(path, CodeUnitNotPrintable, u, "contains %U: expected a printable unit symbol", r)
			return
		}
	}
}
