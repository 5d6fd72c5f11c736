package svgplot

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Mark is how a chart draws its series.
type Mark string

// The marks.
const (
	// MarkLine joins each series' points in x order and draws each point.
	MarkLine Mark = "line"
	// MarkScatter draws each point alone.
	MarkScatter Mark = "scatter"
	// MarkBar draws one bar per category per series.
	MarkBar Mark = "bar"
)

// Series is one named sequence of points: X and Y of one length (a bar
// chart's X is unused, its Y one value per category).
type Series struct {
	Label string
	X, Y  []float64
}

// Chart is one panel: a title, axis labels, the series and how to draw them.
// Every text is escaped when drawn.
type Chart struct {
	Title, Subtitle string
	XLabel, YLabel  string
	Mark            Mark
	// YLog draws y on a log10 axis: every y must be > 0 (the caller drops or
	// refuses the others).
	YLog bool
	// Categories label a bar chart's bars, one per Y value.
	Categories []string
	Series     []Series
}

// Chart geometry, in SVG user units (the viewBox is 0 0 chartW chartH).
const (
	chartW, chartH = 720.0, 480.0
	cLeft, cRight  = 80.0, 700.0
	cTop, cBot     = 70.0, 400.0
)

// palette colours the series in turn.
var palette = []string{"#1f4e9c", "#c0392b", "#27ae60", "#8e44ad", "#d35400", "#16a085", "#7f8c8d", "#2c3e50"}

// Render draws c as a self-contained SVG (no scripts, no external assets).
// Each point is a <circle class="point"> and each bar a <rect class="bar">,
// with a <title> giving its values, so a reader (or a test) can count them.
// The numbers must be finite (and, with YLog, positive): Render refuses
// others, naming the series and index.
func Render(c Chart) ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	w(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="sans-serif" font-size="12">`+"\n",
		Coord(chartW), Coord(chartH), Coord(chartW), Coord(chartH))
	w(`<rect x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`+"\n", Coord(chartW), Coord(chartH))
	w(`<text class="title" x="%s" y="26" text-anchor="middle" font-size="16" font-weight="bold">%s</text>`+"\n", Coord(chartW/2), Esc(c.Title))
	if c.Subtitle != "" {
		w(`<text class="subtitle" x="%s" y="46" text-anchor="middle">%s</text>`+"\n", Coord(chartW/2), Esc(c.Subtitle))
	}
	w(`<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#000000"/>`+"\n",
		Coord(cLeft), Coord(cTop), Coord(cRight-cLeft), Coord(cBot-cTop))

	// The y axis.
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, y := range s.Y {
			ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
		}
	}
	if math.IsInf(ymin, 1) {
		ymin, ymax = 0, 1
	}
	var py func(float64) float64
	var yticks []Tick
	if c.YLog {
		lo, hi, t := LogTicks(ymin, ymax)
		yticks = t
		py = func(v float64) float64 {
			return cBot - (cBot-cTop)*(math.Log10(v)-float64(lo))/float64(hi-lo)
		}
	} else {
		lo, hi, t := RangeTicks(math.Min(0, ymin), ymax)
		yticks = t
		py = func(v float64) float64 { return cBot - (cBot-cTop)*(v-lo)/(hi-lo) }
	}
	for _, tk := range yticks {
		y, size := py(tk.V), 5.0
		if tk.Minor {
			size = 3
		}
		w(`<line class="tick" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#000000"/>`+"\n", Coord(cLeft-size), Coord(y), Coord(cLeft), Coord(y))
		if !tk.Minor {
			w(`<text class="tick-label" x="%s" y="%s" text-anchor="end">%s</text>`+"\n", Coord(cLeft-8), Coord(y+4), Esc(tk.Label))
		}
	}

	// The x axis: categories for bars, numbers otherwise.
	var px func(float64) float64
	if c.Mark == MarkBar {
		n := float64(len(c.Categories))
		slot := (cRight - cLeft) / n
		px = func(i float64) float64 { return cLeft + slot*(i+0.5) }
		for i, cat := range c.Categories {
			x := px(float64(i))
			w(`<text class="tick-label category" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", Coord(x), Coord(cBot+18), Esc(cat))
		}
		zero := py(math.Max(0, yticks[0].V))
		if c.YLog {
			zero = cBot
		}
		bw := slot * 0.8 / float64(len(c.Series))
		for si, s := range c.Series {
			col := palette[si%len(palette)]
			for i, v := range s.Y {
				x0 := px(float64(i)) - slot*0.4 + bw*float64(si)
				y := py(v)
				top, h := math.Min(y, zero), math.Abs(zero-y)
				w(`<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`+"\n",
					Coord(x0), Coord(top), Coord(bw), Coord(h), col, Esc(fmt.Sprintf("%s%s: %s", seriesPrefix(s.Label), c.Categories[i], Num(v))))
			}
		}
	} else {
		xmin, xmax := math.Inf(1), math.Inf(-1)
		for _, s := range c.Series {
			for _, x := range s.X {
				xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			}
		}
		if math.IsInf(xmin, 1) {
			xmin, xmax = 0, 1
		}
		lo, hi, xticks := RangeTicks(math.Min(0, xmin), xmax)
		px = func(v float64) float64 { return cLeft + (cRight-cLeft)*(v-lo)/(hi-lo) }
		for _, tk := range xticks {
			x := px(tk.V)
			w(`<line class="tick" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#000000"/>`+"\n", Coord(x), Coord(cBot), Coord(x), Coord(cBot+5))
			w(`<text class="tick-label" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", Coord(x), Coord(cBot+18), Esc(tk.Label))
		}
		for si, s := range c.Series {
			col := palette[si%len(palette)]
			w(`<g class="series">` + "\n")
			if c.Mark == MarkLine && len(s.X) > 1 {
				idx := sortedByX(s.X)
				pts := make([]string, len(idx))
				for k, i := range idx {
					pts[k] = Coord(px(s.X[i])) + "," + Coord(py(s.Y[i]))
				}
				w(`<polyline class="line" points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", strings.Join(pts, " "), col)
			}
			for i := range s.X {
				w(`<circle class="point" cx="%s" cy="%s" r="3.5" fill="%s"><title>%s</title></circle>`+"\n",
					Coord(px(s.X[i])), Coord(py(s.Y[i])), col, Esc(fmt.Sprintf("%s(%s, %s)", seriesPrefix(s.Label), Num(s.X[i]), Num(s.Y[i]))))
			}
			w("</g>\n")
		}
	}
	w(`<text class="axis-label" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", Coord((cLeft+cRight)/2), Coord(cBot+42), Esc(c.XLabel))
	ly := (cTop + cBot) / 2
	w(`<text class="axis-label" x="20" y="%s" text-anchor="middle" transform="rotate(-90 20 %s)">%s</text>`+"\n", Coord(ly), Coord(ly), Esc(c.YLabel))
	if len(c.Series) > 1 || (len(c.Series) == 1 && c.Series[0].Label != "") {
		w(`<g class="legend">`)
		for si, s := range c.Series {
			y := cTop + 14 + 16*float64(si)
			w(`<rect x="%s" y="%s" width="10" height="10" fill="%s"/><text x="%s" y="%s">%s</text>`,
				Coord(cRight-150), Coord(y-9), palette[si%len(palette)], Coord(cRight-135), Coord(y), Esc(s.Label))
		}
		w("</g>\n")
	}
	w("</svg>\n")
	return b.Bytes(), nil
}

func seriesPrefix(label string) string {
	if label == "" {
		return ""
	}
	return label + ": "
}

// check refuses what cannot be drawn, naming where it is.
func (c Chart) check() error {
	switch c.Mark {
	case MarkLine, MarkScatter, MarkBar:
	default:
		return fmt.Errorf("svgplot: mark %q: want line, scatter or bar", c.Mark)
	}
	if len(c.Series) == 0 {
		return fmt.Errorf("svgplot: no series to draw")
	}
	if c.Mark == MarkBar && len(c.Categories) == 0 {
		return fmt.Errorf("svgplot: a bar chart needs categories")
	}
	for si, s := range c.Series {
		if c.Mark == MarkBar {
			if len(s.Y) != len(c.Categories) {
				return fmt.Errorf("svgplot: series[%d] has %d values for %d categories", si, len(s.Y), len(c.Categories))
			}
		} else if len(s.X) != len(s.Y) {
			return fmt.Errorf("svgplot: series[%d] has %d x and %d y values", si, len(s.X), len(s.Y))
		}
		for i, v := range append(append([]float64(nil), s.X...), s.Y...) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("svgplot: series[%d] value %d is %v: want a finite number", si, i, v)
			}
		}
		if c.YLog {
			for i, v := range s.Y {
				if v <= 0 {
					return fmt.Errorf("svgplot: series[%d].y[%d] is %v: a log axis needs values > 0", si, i, v)
				}
			}
		}
	}
	return nil
}

// sortedByX is the indices of xs in increasing x (stable).
func sortedByX(xs []float64) []int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	return idx
}
