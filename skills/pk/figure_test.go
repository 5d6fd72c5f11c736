package pk

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/scidex/substrate/skills/problem"
)

// svgElement is one element of a parsed figure.
type svgElement struct {
	name  string
	class string
	attrs map[string]string
	title string // text of a <title> child
	text  string // character data of a <text>
	panel string // class of the enclosing panel group, if any
}

// parseSVG parses the figure as XML (failing the test if it is not) and
// returns its elements and the viewBox.
func parseSVG(t *testing.T, b []byte) (els []*svgElement, w, h float64) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var stack []*svgElement
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			e := &svgElement{name: x.Name.Local, attrs: map[string]string{}}
			for _, a := range x.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			e.class = e.attrs["class"]
			for _, up := range stack {
				if strings.HasPrefix(up.class, "panel ") {
					e.panel = up.class
				}
			}
			if e.name == "svg" {
				if x.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("svg namespace %q", x.Name.Space)
				}
				f := strings.Fields(e.attrs["viewBox"])
				w, _ = strconv.ParseFloat(f[2], 64)
				h, _ = strconv.ParseFloat(f[3], 64)
			}
			els = append(els, e)
			stack = append(stack, e)
		case xml.CharData:
			if n := len(stack); n >= 2 && stack[n-1].name == "title" {
				stack[n-2].title += string(x)
			}
			if n := len(stack); n >= 1 && stack[n-1].name == "text" {
				stack[n-1].text += string(x)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	return els, w, h
}

func theophFigure(t *testing.T, subject int) (Profile, *Result, []byte) {
	t.Helper()
	p := theophProfiles(t)[subject]
	r, err := NCA(p, Options{AUCMethod: AUCLinearUpLogDown})
	if err != nil {
		t.Fatal(err)
	}
	b, err := FigureSVG(p, r, CanonicalAxisUnits)
	if err != nil {
		t.Fatal(err)
	}
	return p, r, b
}

func TestFigureSVG(t *testing.T) {
	for subject := 0; subject < 12; subject++ {
		p, r, b := theophFigure(t, subject)
		els, w, h := parseSVG(t, b)
		if w != figW || h != figH {
			t.Fatalf("viewBox %v×%v", w, h)
		}
		var marks []*svgElement
		var fit *svgElement
		fits := 0
		for _, e := range els {
			switch {
			case e.name == "script" || e.name == "image" || e.name == "foreignObject" || e.name == "use":
				t.Errorf("figure has a <%s>: it must be self-contained, without scripts", e.name)
			case e.class == "lambda-z-point":
				marks = append(marks, e)
			case e.class == "lambda-z-fit":
				fit = e
				fits++
			}
			for k, v := range e.attrs {
				if k == "href" || strings.HasPrefix(k, "on") || strings.Contains(v, "url(") {
					t.Errorf("<%s %s=%q>: no links, handlers or external references", e.name, k, v)
				}
				checkCoordinates(t, e.name, k, v, w, h)
			}
		}
		// Axis labels come as character data; read them straight from the text.
		for _, s := range []string{">Time (h)<", ">Concentration (mg/L)<"} {
			if n := strings.Count(string(b), s); n != 2 {
				t.Errorf("subject %s: %q appears %d times, want once per panel", p.Subject, s, n)
			}
		}
		if !strings.Contains(string(b), "subject "+p.Subject) || !strings.Contains(string(b), "linear_up_log_down") {
			t.Errorf("title lacks the subject or the method")
		}
		// Exactly the λz points are marked, each at its time and concentration.
		tm := r.Terminal
		if len(marks) != tm.N || fits != 1 {
			t.Fatalf("subject %s: %d λz marks and %d fit lines, want %d and 1", p.Subject, len(marks), fits, tm.N)
		}
		onSample := map[string]bool{}
		for _, e := range els {
			if e.class == "sample" && e.panel == "panel panel-log" {
				onSample[e.attrs["cx"]+","+e.attrs["cy"]] = true
			}
		}
		for i, m := range marks {
			if m.panel != "panel panel-log" || !onSample[m.attrs["cx"]+","+m.attrs["cy"]] {
				t.Errorf("mark %d at (%s, %s) on %q is not on a log-panel sample", i, m.attrs["cx"], m.attrs["cy"], m.panel)
			}
			want := "λz point: t = " + num(tm.Times[i]) + " h, C = " + num(tm.Conc[i]) + " mg/L"
			if m.title != want {
				t.Errorf("mark %d title %q, want %q", i, m.title, want)
			}
		}
		checkPlacement(t, p, els)
		// The fitted line starts at the first λz point's time and falls.
		y1, _ := strconv.ParseFloat(fit.attrs["y1"], 64)
		y2, _ := strconv.ParseFloat(fit.attrs["y2"], 64)
		if fit.attrs["x1"] != marks[0].attrs["cx"] || !(y2 > y1) {
			t.Errorf("fit line %v, first mark %v", fit.attrs, marks[0].attrs)
		}
		b2, err := FigureSVG(p, r, CanonicalAxisUnits)
		if err != nil || !bytes.Equal(b, b2) {
			t.Errorf("subject %s: output is not deterministic", p.Subject)
		}
	}
}

// checkCoordinates fails on a non-finite number or one outside the viewBox
// in any geometric attribute.
func checkCoordinates(t *testing.T, el, attr, v string, w, h float64) {
	t.Helper()
	var limit float64
	switch attr {
	case "x", "cx", "x1", "x2", "width":
		limit = w
	case "y", "cy", "y1", "y2", "height":
		limit = h
	case "r":
		limit = 20
	case "points":
		for _, pair := range strings.Fields(v) {
			xy := strings.Split(pair, ",")
			x, err1 := strconv.ParseFloat(xy[0], 64)
			y, err2 := strconv.ParseFloat(xy[1], 64)
			if err1 != nil || err2 != nil || !(x >= 0 && x <= w && y >= 0 && y <= h) {
				t.Errorf("<%s points> pair %q not finite inside the viewBox", el, pair)
			}
		}
		return
	case "transform":
		inner := strings.TrimSuffix(strings.TrimPrefix(v, "rotate("), ")")
		for _, f := range strings.Fields(inner) {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				t.Errorf("<%s transform=%q> not finite", el, v)
			}
		}
		return
	default:
		return
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > limit {
		t.Errorf("<%s %s=%q> not a finite coordinate in [0, %v]", el, attr, v, limit)
	}
}

// TestFigureWithoutLambdaZ: no marks and no fit line when λz is not
// estimable; BLQ samples drawn hollow on the linear panel only.
func TestFigureWithoutLambdaZ(t *testing.T) {
	p := Profile{Subject: "x", Times: []float64{0, 1, 2, 4, 6}, Conc: []float64{0.05, 1, 2, 3, 2.5}, Dose: 10,
		Route: RouteExtravascular, LLOQ: fptr(0.1), BLQRule: BLQZero}
	r, err := NCA(p, Options{AUCMethod: AUCLinear})
	if err != nil {
		t.Fatal(err)
	}
	b, err := FigureSVG(p, r, AxisUnits{Time: "min", Concentration: "ug/mL"})
	if err != nil {
		t.Fatal(err)
	}
	els, w, h := parseSVG(t, b)
	hollow := 0
	for _, e := range els {
		if e.class == "lambda-z-point" || e.class == "lambda-z-fit" {
			t.Errorf("a %s without λz", e.class)
		}
		if e.class == "sample sample-blq" {
			hollow++
		}
		for k, v := range e.attrs {
			checkCoordinates(t, e.name, k, v, w, h)
		}
	}
	if hollow != 1 || !strings.Contains(string(b), ">Time (min)<") || !strings.Contains(string(b), "λz not estimable") {
		t.Errorf("hollow %d; labels or subtitle missing", hollow)
	}
}

func TestFigureRefusals(t *testing.T) {
	p, r, _ := theophFigure(t, 0)
	var pe *problem.Error
	if _, err := FigureSVG(p, nil, CanonicalAxisUnits); !errors.As(err, &pe) || pe.Problems[0].Code != CodeResultMissing {
		t.Errorf("nil result: %v", err)
	}
	if _, err := FigureSVG(p, r, AxisUnits{Time: "h"}); !errors.As(err, &pe) || pe.Problems[0].Path != "units.concentration" || pe.Problems[0].Code != CodeUnitRequired {
		t.Errorf("missing unit: %v", err)
	}
	q := p
	q.Subject = "2"
	if _, err := FigureSVG(q, r, CanonicalAxisUnits); !errors.As(err, &pe) || pe.Problems[0].Code != CodeResultProfileMismatch {
		t.Errorf("mismatch: %v", err)
	}
	q = p
	q.Times = append([]float64{}, p.Times...)
	q.Times[1] = 0
	if _, err := FigureSVG(q, r, CanonicalAxisUnits); !errors.As(err, &pe) || pe.Problems[0].Code != CodeDuplicateTime {
		t.Errorf("bad profile: %v", err)
	}
}

// checkPlacement reads each panel's y axis back from its tick labels (value
// and position) and checks that every quantifiable sample (positive on the
// log panel) is drawn
// at its concentration on that axis, linear or log, and that the x axis
// likewise puts it at its time: the data are plotted against the axes shown.
func checkPlacement(t *testing.T, p Profile, els []*svgElement) {
	t.Helper()
	for _, panel := range []string{"panel panel-linear", "panel panel-log"} {
		logScale := strings.HasSuffix(panel, "log")
		type pos struct{ v, at float64 }
		var xt, yt []pos
		var cx, cy []float64
		var frame *svgElement
		for _, e := range els {
			if e.panel != panel {
				continue
			}
			if e.name == "rect" && e.class == "" { // the frame, not the λz range
				frame = e
			}
			if e.class == "tick-label" {
				v, err := strconv.ParseFloat(e.text, 64)
				if err != nil {
					t.Fatalf("tick label %q", e.text)
				}
				x, _ := strconv.ParseFloat(e.attrs["x"], 64)
				y, _ := strconv.ParseFloat(e.attrs["y"], 64)
				if e.attrs["text-anchor"] == "end" {
					if logScale {
						v = math.Log10(v)
					}
					yt = append(yt, pos{v, y - 4})
				} else {
					xt = append(xt, pos{v, x})
				}
			}
			if e.class == "sample" {
				x, _ := strconv.ParseFloat(e.attrs["cx"], 64)
				y, _ := strconv.ParseFloat(e.attrs["cy"], 64)
				cx, cy = append(cx, x), append(cy, y)
			}
		}
		if len(xt) < 2 || len(yt) < 2 {
			t.Fatalf("%s: %d x and %d y tick labels", panel, len(xt), len(yt))
		}
		// The axes span the plot frame: first and last ticks on its edges.
		fx, _ := strconv.ParseFloat(frame.attrs["x"], 64)
		fy, _ := strconv.ParseFloat(frame.attrs["y"], 64)
		fw, _ := strconv.ParseFloat(frame.attrs["width"], 64)
		fh, _ := strconv.ParseFloat(frame.attrs["height"], 64)
		for _, edge := range [][2]float64{{xt[0].at, fx}, {xt[len(xt)-1].at, fx + fw}, {yt[0].at, fy + fh}, {yt[len(yt)-1].at, fy}} {
			if math.Abs(edge[0]-edge[1]) > 0.02 {
				t.Errorf("%s: an end tick at %v, the frame's edge at %v", panel, edge[0], edge[1])
			}
		}
		axis := func(ticks []pos, v float64) float64 {
			a, b := ticks[0], ticks[len(ticks)-1]
			return a.at + (v-a.v)*(b.at-a.at)/(b.v-a.v)
		}
		i := 0
		for k, c := range p.Conc {
			if (logScale && c <= 0) || (p.LLOQ != nil && c < *p.LLOQ) {
				continue
			}
			v := c
			if logScale {
				v = math.Log10(c)
			}
			if i >= len(cx) || math.Abs(cx[i]-axis(xt, p.Times[k])) > 0.02 || math.Abs(cy[i]-axis(yt, v)) > 0.02 {
				t.Errorf("%s: sample %d (t %v, C %v) drawn at (%v, %v), the axes say (%.2f, %.2f)",
					panel, k, p.Times[k], c, cx[i], cy[i], axis(xt, p.Times[k]), axis(yt, v))
				return
			}
			i++
		}
	}
}
