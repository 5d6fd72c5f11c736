// Package figure is figure.generate, one of SPEC-001 §7.4's action verbs as
// a tool: draw an analysis artifact's data as one of the declared figure
// types (Types) and record the drawing as a figure artifact derived from the
// analysis, so a reader of the analysis can look at it and a figure says
// what it was drawn from. The drawing is internal/svgplot's, the one pk.nca's
// figures use; a figure of a private analysis is as private as it (the
// derived_from link carries privacy).
package figure

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/svgplot"
	"github.com/scidex/substrate/runtimes"
)

// Function is the tool's name and its in_process function.
const Function = "figure.generate"

// Version is the version of the drawing logic.
const Version = "1.0.0"

// Manifest is the tool's manifest.
//
//go:embed tool.json
var Manifest []byte

// MaxPoints caps the points (or bars) one figure draws, all series together:
// past it the SVG would not fit a figure artifact (svg maxLength 900000).
const MaxPoints = 5000

// maxSVG is the figure schema's svg maxLength.
const maxSVG = 900000

// Type is a declared figure type: how it draws and which fields of the
// analysis's content.data it reads.
type Type struct {
	Name    string       `json:"name"`
	Mark    svgplot.Mark `json:"mark"`
	Summary string       `json:"summary"`
	// Reads are the paths in the analysis content it reads.
	Reads []string `json:"reads"`
	// YScale is the y axis when the call gives none: linear or log.
	YScale string `json:"y_scale"`
	// Units are required (data.x.unit and data.y.unit).
	Units bool `json:"units_required"`
}

// Types are the declared figure types, the only ones figure.generate draws.
var Types = []Type{
	{Name: "line", Mark: svgplot.MarkLine, YScale: "linear", Summary: "each series' points joined in x order",
		Reads: []string{"data.series[].x", "data.series[].y", "data.series[].label", "data.x.label", "data.x.unit", "data.y.label", "data.y.unit"}},
	{Name: "scatter", Mark: svgplot.MarkScatter, YScale: "linear", Summary: "each series' points, unjoined",
		Reads: []string{"data.series[].x", "data.series[].y", "data.series[].label", "data.x.label", "data.x.unit", "data.y.label", "data.y.unit"}},
	{Name: "bar", Mark: svgplot.MarkBar, YScale: "linear", Summary: "one bar per category per series",
		Reads: []string{"data.categories", "data.series[].y", "data.series[].label", "data.x.label", "data.y.label", "data.y.unit"}},
	{Name: "concentration_time", Mark: svgplot.MarkLine, YScale: "log", Units: true, Summary: "concentration against time, log (default) or linear y",
		Reads: []string{"data.series[].x (time)", "data.series[].y (concentration)", "data.series[].label", "data.x.unit", "data.y.unit"}},
}

// TypeNames are the declared types' names, in order.
func TypeNames() []string {
	out := make([]string, len(Types))
	for i, t := range Types {
		out[i] = t.Name
	}
	return out
}

func typeNamed(name string) (Type, bool) {
	for _, t := range Types {
		if t.Name == name {
			return t, true
		}
	}
	return Type{}, false
}

// Args are the tool's arguments.
type Args struct {
	Analysis   string `json:"analysis"`
	FigureType string `json:"figure_type"`
	Title      string `json:"title,omitempty"`
	YScale     string `json:"y_scale,omitempty"`
}

// Check refuses an unknown figure type (naming the declared ones) or y
// scale before the call is recorded.
func Check(raw json.RawMessage) []runtimes.Problem {
	var a Args
	if json.Unmarshal(raw, &a) != nil {
		return nil // the input schema says what is wrong
	}
	var ps []runtimes.Problem
	if _, ok := typeNamed(a.FigureType); !ok {
		ps = append(ps, runtimes.Problem{Path: "figure_type", Constraint: "declared",
			Message: fmt.Sprintf("figure_type %q is not declared: want one of %s", a.FigureType, strings.Join(TypeNames(), ", "))})
	}
	if a.YScale != "" && a.YScale != "linear" && a.YScale != "log" {
		ps = append(ps, runtimes.Problem{Path: "y_scale", Constraint: "enum", Message: fmt.Sprintf("y_scale %q: want linear or log", a.YScale)})
	}
	if a.Analysis != "" {
		if r, err := ref.Parse(a.Analysis); err != nil {
			ps = append(ps, runtimes.Problem{Path: "analysis", Constraint: "ref", Message: err.Error()})
		} else if r.Type != "analysis" {
			ps = append(ps, runtimes.Problem{Path: "analysis", Constraint: "type", Message: fmt.Sprintf("%s is a %s: want an analysis", a.Analysis, r.Type)})
		}
	}
	return ps
}

// New returns the tool, reading the analysis and writing the figure through
// st as the caller: an analysis the caller cannot read is not found, and
// nothing is written.
func New(st *store.Store) func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
	return func(ctx context.Context, raw json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		var a Args
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
		if ps := Check(raw); len(ps) > 0 {
			return nil, fmt.Errorf("%s: %s", ps[0].Path, ps[0].Message)
		}
		r, _ := ref.Parse(a.Analysis)
		an, err := st.Get(ctx, r)
		if errors.Is(err, store.ErrNotFound) {
			// Not found and not readable look alike: a private analysis
			// does not exist for whoever may not read it.
			return nil, runtimes.Errorf(runtimes.CodeToolError, false, "analysis: %s not found", a.Analysis)
		}
		if err != nil {
			return nil, fmt.Errorf("analysis: %w", err)
		}
		fig, err := Draw(an.Title, an.Content, a)
		if err != nil {
			return nil, runtimes.Errorf(runtimes.CodeToolError, false, "%s", err.Error())
		}
		src := an.Ref().String()
		content, err := json.Marshal(map[string]any{
			"caption": fig.Caption, "alt_text": fig.AltText, "figure_type": a.FigureType,
			"media_type": "image/svg+xml", "svg": string(fig.SVG), "spec_format": "svg",
			"spec":        map[string]any{"figure_type": a.FigureType, "y_scale": fig.YScale, "reads": fig.Type.Reads, "points": fig.Points, "dropped": fig.Dropped},
			"source_data": []string{src},
			"produced_by": map[string]any{"tool": Function, "version": Version},
		})
		if err != nil {
			return nil, fmt.Errorf("encode the figure: %w", err)
		}
		// The figure and its derived_from link commit together: the link is
		// what makes a figure of a private analysis private.
		var res *store.WriteResult
		err = st.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			var err error
			if res, err = tx.Store().CreateArtifact(ctx, store.CreateParams{Type: "figure", Title: fig.Title, Content: content}); err != nil {
				return fmt.Errorf("record the figure: %w", err)
			}
			if _, err := tx.Store().AddLink(ctx, store.LinkParams{From: res.Ref, Predicate: store.PredDerivedFrom, To: src}); err != nil {
				return fmt.Errorf("link the figure to %s: %w", src, err)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"figure": res.Ref, "result_ref": res.Ref, "figure_url": "/artifacts/" + res.Ref + "/figure.svg",
			"figure_type": a.FigureType, "points": fig.Points, "dropped": fig.Dropped, "notes": nonNil(fig.Notes)})
	}
}

// Figure is a drawn figure with what it says of itself.
type Figure struct {
	Type             Type
	Title            string
	Caption, AltText string
	YScale           string
	SVG              []byte
	// Points is how many points (or bars) were drawn, Dropped how many a
	// log axis left off.
	Points, Dropped int
	Notes           []string
}

// Draw draws an analysis's content (its data field) as a.FigureType.
// Every refusal names the field of the analysis at fault.
func Draw(analysisTitle string, content json.RawMessage, a Args) (*Figure, error) {
	ft, ok := typeNamed(a.FigureType)
	if !ok {
		return nil, fmt.Errorf("figure_type %q is not declared: want one of %s", a.FigureType, strings.Join(TypeNames(), ", "))
	}
	var c struct {
		Data *struct {
			X, Y       axis
			Categories []json.RawMessage `json:"categories"`
			Series     []struct {
				Label json.RawMessage   `json:"label"`
				X     []json.RawMessage `json:"x"`
				Y     []json.RawMessage `json:"y"`
			} `json:"series"`
		} `json:"data"`
	}
	if err := json.Unmarshal(content, &c); err != nil {
		return nil, fmt.Errorf("the analysis's data is not of the declared shape (data.series[] of {label, x[], y[]}, data.x and data.y {label, unit}, data.categories[]): %v", err)
	}
	d := c.Data
	if d == nil || len(d.Series) == 0 {
		return nil, fmt.Errorf("data.series: the analysis has no data series to draw (%s reads %s)", ft.Name, strings.Join(ft.Reads, ", "))
	}
	total := 0
	for _, s := range d.Series {
		total += max(len(s.X), len(s.Y))
	}
	if total > MaxPoints {
		return nil, fmt.Errorf("data.series: %d points: figure.generate draws at most %d (MaxPoints) in one figure", total, MaxPoints)
	}
	yscale := a.YScale
	if yscale == "" {
		yscale = ft.YScale
	}
	chart := svgplot.Chart{Mark: ft.Mark, YLog: yscale == "log"}
	fig := &Figure{Type: ft, YScale: yscale}
	if ft.Mark == svgplot.MarkBar {
		if len(d.Categories) == 0 {
			return nil, fmt.Errorf("data.categories: a bar figure needs one category per bar")
		}
		for i, raw := range d.Categories {
			s, err := label(raw)
			if err != nil {
				return nil, fmt.Errorf("data.categories[%d]: %v", i, err)
			}
			chart.Categories = append(chart.Categories, s)
		}
	}
	for si, s := range d.Series {
		lab, err := label(s.Label)
		if err != nil {
			return nil, fmt.Errorf("data.series[%d].label: %v", si, err)
		}
		ys, err := numbers(s.Y, fmt.Sprintf("data.series[%d].y", si))
		if err != nil {
			return nil, err
		}
		var xs []float64
		if ft.Mark == svgplot.MarkBar {
			if len(ys) != len(chart.Categories) {
				return nil, fmt.Errorf("data.series[%d].y has %d values and data.categories %d: want one value per category", si, len(ys), len(chart.Categories))
			}
		} else {
			if xs, err = numbers(s.X, fmt.Sprintf("data.series[%d].x", si)); err != nil {
				return nil, err
			}
			if len(xs) != len(ys) {
				return nil, fmt.Errorf("data.series[%d]: x has %d values and y %d: want the same length", si, len(xs), len(ys))
			}
		}
		if chart.YLog {
			// A log axis cannot place y ≤ 0: those points are left off,
			// and the caption says how many (as pk.nca's log panel does).
			var kx, ky []float64
			for i, y := range ys {
				if y > 0 {
					ky = append(ky, y)
					if xs != nil {
						kx = append(kx, xs[i])
					}
				} else {
					fig.Dropped++
				}
			}
			if ft.Mark == svgplot.MarkBar && len(ky) != len(ys) {
				return nil, fmt.Errorf("data.series[%d].y has values ≤ 0, which a log axis cannot draw as bars: ask for y_scale linear", si)
			}
			xs, ys = kx, ky
		}
		fig.Points += len(ys)
		chart.Series = append(chart.Series, svgplot.Series{Label: lab, X: xs, Y: ys})
	}
	if fig.Points == 0 {
		return nil, fmt.Errorf("data.series: no point left to draw (%d with y ≤ 0 dropped from the log axis)", fig.Dropped)
	}
	if fig.Dropped > 0 {
		fig.Notes = append(fig.Notes, fmt.Sprintf("%d point(s) with y ≤ 0 were left off the log axis", fig.Dropped))
	}
	xl, yl := d.X.text("x"), d.Y.text("y")
	if ft.Name == "concentration_time" {
		if strings.TrimSpace(d.X.Unit) == "" || strings.TrimSpace(d.Y.Unit) == "" {
			return nil, fmt.Errorf("data.x.unit and data.y.unit: a concentration_time figure needs the time and concentration units")
		}
		xl, yl = withUnit(orDefault(d.X.Label, "Time"), d.X.Unit), withUnit(orDefault(d.Y.Label, "Concentration"), d.Y.Unit)
	}
	chart.XLabel, chart.YLabel = xl, yl
	fig.Title = orDefault(a.Title, analysisTitle)
	chart.Title = fig.Title
	chart.Subtitle = fmt.Sprintf("%s, %s y axis, %d point(s)", ft.Name, yscale, fig.Points)
	if len(fig.Notes) > 0 {
		chart.Subtitle += "; " + strings.Join(fig.Notes, "; ")
	}
	svg, err := svgplot.Render(chart)
	if err != nil {
		return nil, err
	}
	if len(svg) > maxSVG {
		return nil, fmt.Errorf("data.series: the drawing is %d bytes, over a figure's %d: draw fewer points", len(svg), maxSVG)
	}
	fig.SVG = svg
	fig.Caption = fmt.Sprintf("%s figure of %q: %d series, %d point(s), %s y axis.", ft.Name, analysisTitle, len(chart.Series), fig.Points, yscale)
	if len(fig.Notes) > 0 {
		fig.Caption += " " + strings.Join(fig.Notes, "; ") + "."
	}
	fig.AltText = fmt.Sprintf("A %s chart of %s against %s, %d series.", ft.Mark, yl, xl, len(chart.Series))
	return fig, nil
}

type axis struct {
	Label string `json:"label"`
	Unit  string `json:"unit"`
}

func (a axis) text(def string) string { return withUnit(orDefault(a.Label, def), a.Unit) }

func withUnit(label, unit string) string {
	if strings.TrimSpace(unit) == "" {
		return label
	}
	return label + " (" + unit + ")"
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// numbers reads a JSON array of finite numbers, naming the first that is
// not one (a string, null, an overflowing literal).
func numbers(raws []json.RawMessage, path string) ([]float64, error) {
	out := make([]float64, len(raws))
	for i, raw := range raws {
		s := strings.TrimSpace(string(raw))
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || strings.HasPrefix(s, `"`) {
			return nil, fmt.Errorf("%s[%d] is %s: want a finite number", path, i, clip(s))
		}
		out[i] = v
	}
	return out, nil
}

// label reads a string (or a number, drawn as written); absent is "".
func label(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if len(s) > 200 {
			return "", fmt.Errorf("is %d bytes: want at most 200", len(s))
		}
		return s, nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), nil
	}
	return "", fmt.Errorf("is %s: want a string", clip(string(raw)))
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
