package svgplot

import (
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
)

// A chart is XML with one circle per point (one rect per bar), its texts
// escaped; numbers it cannot place are refused naming where they are.
func TestRender(t *testing.T) {
	svg, err := Render(Chart{Title: `<script>alert("x")</script>`, XLabel: "t & u", Mark: MarkLine,
		Series: []Series{{Label: "<b>a</b>", X: []float64{2, 0, 1}, Y: []float64{-1, 3, 2}}}})
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	dec := xml.NewDecoder(strings.NewReader(string(svg)))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			n[se.Name.Local]++
		}
	}
	if n["circle"] != 3 || n["polyline"] != 1 || n["script"] != 0 || n["b"] != 0 || !strings.Contains(string(svg), "&lt;script&gt;") {
		t.Errorf("elements %v:\n%s", n, svg)
	}
	bars, err := Render(Chart{Mark: MarkBar, Categories: []string{"a", "b"}, Series: []Series{{Y: []float64{1, 2}}, {Y: []float64{3, 4}}}})
	if err != nil || strings.Count(string(bars), `class="bar"`) != 4 {
		t.Errorf("bars: %v", err)
	}
	for name, c := range map[string]Chart{
		"NaN":        {Mark: MarkScatter, Series: []Series{{X: []float64{1}, Y: []float64{math.NaN()}}}},
		"Inf":        {Mark: MarkScatter, Series: []Series{{X: []float64{math.Inf(1)}, Y: []float64{1}}}},
		"lengths":    {Mark: MarkLine, Series: []Series{{X: []float64{1, 2}, Y: []float64{1}}}},
		"log of 0":   {Mark: MarkLine, YLog: true, Series: []Series{{X: []float64{1}, Y: []float64{0}}}},
		"a pie":      {Mark: "pie", Series: []Series{{X: []float64{1}, Y: []float64{1}}}},
		"bars short": {Mark: MarkBar, Categories: []string{"a"}, Series: []Series{{Y: []float64{1, 2}}}},
	} {
		if _, err := Render(c); err == nil {
			t.Errorf("%s: drawn", name)
		}
	}
}
