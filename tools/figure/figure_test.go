package figure_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/tools/figure"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

const invokeQ = `mutation($n: String!, $a: JSON!) {
  invokeTool(input: {name: $n, args: $a}) {
    __typename
    ... on ToolCall { status result resultRef error }
    ... on ValidationFailed { problems { path constraint message } }
    ... on Problem { code message } } }`

type call struct {
	Typename  string `json:"__typename"`
	Status    string
	Result    json.RawMessage
	ResultRef *string
	Error     *struct{ Code, Message string }
	Problems  []struct{ Path, Constraint, Message string }
	Code      string
	Message   string
}

func (c call) String() string {
	b, _ := json.Marshal(c)
	return string(b)
}

func invoke(t *testing.T, e *apitest.Env, token string, args any) call {
	t.Helper()
	var out struct{ InvokeTool call }
	e.OK(t, token, invokeQ, map[string]any{"n": figure.Function, "a": args}, &out)
	return out.InvokeTool
}

func analysis(t *testing.T, e *apitest.Env, token, title string, data any) string {
	t.Helper()
	var out struct {
		CreateArtifact struct {
			Typename string `json:"__typename"`
			Ref      string
			Message  string
		}
	}
	e.OK(t, token, `mutation($t: String!, $c: JSON!) { createArtifact(input: {type: "analysis", title: $t, content: $c}) {
	  __typename ... on WriteSuccess { ref } ... on Problem { message } } }`,
		map[string]any{"t": title, "c": map[string]any{"question": "How does it go?", "data": data}}, &out)
	if out.CreateArtifact.Ref == "" {
		t.Fatalf("create the analysis: %+v", out.CreateArtifact)
	}
	return out.CreateArtifact.Ref
}

// svgOf reads the figure's SVG as its reader would, and checks it is XML.
func svgOf(t *testing.T, e *apitest.Env, token, ref string) (string, map[string]int) {
	t.Helper()
	var out struct {
		Artifact struct {
			Content struct {
				SVG        string   `json:"svg"`
				Caption    string   `json:"caption"`
				SourceData []string `json:"source_data"`
				FigureType string   `json:"figure_type"`
			}
			Links struct {
				Edges []struct {
					Node struct {
						Predicate string
						To        struct{ Ref string }
					}
				}
			}
		}
	}
	e.OK(t, token, `query($r: Ref!) { artifact(ref: $r) { content links { edges { node { predicate to { ref } } } } } }`, map[string]any{"r": ref}, &out)
	counts := map[string]int{}
	dec := xml.NewDecoder(strings.NewReader(out.Artifact.Content.SVG))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
			for _, a := range se.Attr {
				if a.Name.Local == "class" {
					counts["."+a.Value]++
				}
			}
		}
	}
	for _, l := range out.Artifact.Links.Edges {
		counts["link:"+l.Node.Predicate]++
	}
	return out.Artifact.Content.SVG, counts
}

// figure.generate over GraphQL: each declared type draws the analysis's data
// as an SVG figure artifact derived from the analysis, with one circle per
// point or one rect per bar, markup in a title or label drawn as text; the
// hostile cases are refused naming the field (or the cap) and write nothing.
func TestFigureGenerateOverGraphQL(t *testing.T) {
	e := apitest.New(t)
	ada := apitest.Contributor(t, "ada")
	data := map[string]any{
		"x": map[string]any{"label": "Time", "unit": "h"}, "y": map[string]any{"label": "Conc <b>", "unit": "mg/L"},
		"series": []any{
			map[string]any{"label": "subject <script>alert(1)</script>", "x": []any{0, 1, 2, 4, 8}, "y": []any{0, 10.5, 8.2, 5.1, 2.0}},
			map[string]any{"label": "subject 2", "x": []any{0, 1, 2}, "y": []any{0.5, 9, 7}},
		},
	}
	an := analysis(t, e, ada, "Theophylline & friends", data)

	c := invoke(t, e, ada, map[string]any{"analysis": an, "figure_type": "line", "title": "<script>alert('x')</script> PK"})
	if c.Status != "SUCCEEDED" || c.ResultRef == nil || !strings.HasPrefix(*c.ResultRef, "figure:") {
		t.Fatalf("line: %s", c)
	}
	svg, n := svgOf(t, e, ada, *c.ResultRef)
	if n[".point"] != 8 || n[".line"] != 2 || n["script"] != 0 || n["link:derived_from"] != 1 {
		t.Errorf("line figure: %v", n)
	}
	if !strings.Contains(svg, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; PK") || !strings.Contains(svg, "subject &lt;script&gt;") || strings.Contains(svg, "<script") {
		t.Errorf("the title and labels are not escaped text:\n%s", svg)
	}

	// concentration_time: log y by default, the zeros left off with a note.
	c = invoke(t, e, ada, map[string]any{"analysis": an, "figure_type": "concentration_time"})
	if c.Status != "SUCCEEDED" || !strings.Contains(string(c.Result), `"dropped":1`) || !strings.Contains(string(c.Result), "left off the log axis") {
		t.Fatalf("concentration_time: %s", c)
	}
	if _, n := svgOf(t, e, ada, *c.ResultRef); n[".point"] != 7 {
		t.Errorf("concentration_time points: %v", n)
	}
	// Linear, the zeros are drawn.
	c = invoke(t, e, ada, map[string]any{"analysis": an, "figure_type": "scatter", "y_scale": "linear"})
	if _, n := svgOf(t, e, ada, *c.ResultRef); c.Status != "SUCCEEDED" || n[".point"] != 8 || n[".line"] != 0 {
		t.Errorf("scatter: %s %v", c, n)
	}
	bars := analysis(t, e, ada, "Arms", map[string]any{"categories": []any{"placebo", "10 mg", "30 mg"},
		"y": map[string]any{"label": "Responders", "unit": "%"}, "series": []any{map[string]any{"y": []any{12, 30, 41}}}})
	c = invoke(t, e, ada, map[string]any{"analysis": bars, "figure_type": "bar"})
	if _, n := svgOf(t, e, ada, *c.ResultRef); c.Status != "SUCCEEDED" || n[".bar"] != 3 {
		t.Errorf("bar: %s %v", c, n)
	}

	// Hostile calls: each refused naming what is wrong, and none writes a figure.
	before := e.Counts(t)
	figures := func() int {
		var k int
		if err := e.Pool.QueryRow(t.Context(), `SELECT count(*) FROM artifacts WHERE type = 'figure'`).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	nFig := figures()
	c = invoke(t, e, ada, map[string]any{"analysis": an, "figure_type": "pie"})
	if c.Typename != "ValidationFailed" || len(c.Problems) != 1 || c.Problems[0].Path != "input.args.figure_type" ||
		!strings.Contains(c.Problems[0].Message, "line, scatter, bar, concentration_time") {
		t.Errorf("unknown figure_type: %s", c)
	}
	if after := e.Counts(t); !maps.Equal(before, after) {
		t.Errorf("a refused call wrote: %v -> %v", before, after)
	}
	hostile := []struct {
		name string
		data any
		typ  string
		want string
	}{
		{"a string for a number", map[string]any{"series": []any{map[string]any{"x": []any{1, 2}, "y": []any{1, "NaN"}}}}, "line", `data.series[0].y[1] is "NaN": want a finite number`},
		{"null for a number", map[string]any{"series": []any{map[string]any{"x": []any{1, nil}, "y": []any{1, 2}}}}, "scatter", `data.series[0].x[1] is null`},
		{"mismatched lengths", map[string]any{"series": []any{map[string]any{"x": []any{1, 2, 3}, "y": []any{1, 2}}}}, "line", "x has 3 values and y 2"},
		{"bars for other categories", map[string]any{"categories": []any{"a"}, "series": []any{map[string]any{"y": []any{1, 2}}}}, "bar", "data.series[0].y has 2 values and data.categories 1"},
		{"log of non-positive only", map[string]any{"x": map[string]any{"unit": "h"}, "y": map[string]any{"unit": "mg/L"}, "series": []any{map[string]any{"x": []any{0, 1}, "y": []any{0, -1}}}}, "concentration_time", "no point left to draw (2 with y ≤ 0"},
		{"no units", map[string]any{"series": []any{map[string]any{"x": []any{0, 1}, "y": []any{1, 2}}}}, "concentration_time", "data.x.unit and data.y.unit"},
		{"no data", map[string]any{}, "line", "data.series: the analysis has no data series"},
	}
	for _, h := range hostile {
		ref := analysis(t, e, ada, h.name, h.data)
		nFig = figures()
		c := invoke(t, e, ada, map[string]any{"analysis": ref, "figure_type": h.typ})
		if c.Status != "FAILED" || c.Error == nil || !strings.Contains(c.Error.Message, h.want) {
			t.Errorf("%s: %s, want an error with %q", h.name, c, h.want)
		}
		if k := figures(); k != nFig {
			t.Errorf("%s: %d figures written", h.name, k-nFig)
		}
	}
	// Over the cap: refused naming it, before anything is drawn.
	xs := make([]any, figure.MaxPoints+1)
	for i := range xs {
		xs[i] = i
	}
	big := analysis(t, e, ada, "big", map[string]any{"series": []any{map[string]any{"x": xs, "y": xs}}})
	nFig = figures()
	c = invoke(t, e, ada, map[string]any{"analysis": big, "figure_type": "scatter"})
	if c.Status != "FAILED" || !strings.Contains(c.Error.Message, fmt.Sprintf("%d points: figure.generate draws at most %d", figure.MaxPoints+1, figure.MaxPoints)) || figures() != nFig {
		t.Errorf("over the cap: %s", c)
	}

	// A private analysis (derived from ada's message to grace): grace may
	// draw it and her figure is private too; bob cannot, and nothing is written.
	var sent struct{ SendMessage struct{ Ref string } }
	e.OK(t, ada, `mutation { sendMessage(input: {recipient: "actor:grace", body: "the private numbers"}) { ... on WriteSuccess { ref } } }`, nil, &sent)
	priv := analysis(t, e, ada, "Private PK", data)
	var link struct {
		AddLink struct {
			Typename string `json:"__typename"`
		}
	}
	e.OK(t, ada, `mutation($f: Ref!, $t: Ref!) { addLink(input: {from: $f, predicate: "derived_from", to: $t}) { __typename } }`,
		map[string]any{"f": strings.SplitN(priv, "@", 2)[0], "t": sent.SendMessage.Ref}, &link)
	bob := apitest.Contributor(t, "bob")
	nFig = figures()
	c = invoke(t, e, bob, map[string]any{"analysis": strings.SplitN(priv, "@", 2)[0], "figure_type": "line"})
	if c.Status != "FAILED" || c.Error == nil || !strings.Contains(strings.ToLower(c.Error.Message), "not found") || figures() != nFig {
		t.Errorf("bob drawing a private analysis: %s", c)
	}
	grace := apitest.Contributor(t, "grace")
	c = invoke(t, e, grace, map[string]any{"analysis": strings.SplitN(priv, "@", 2)[0], "figure_type": "line"})
	if c.Status != "SUCCEEDED" || c.ResultRef == nil {
		t.Fatalf("grace drawing the private analysis: %s", c)
	}
	var seen struct{ Artifact *struct{ Ref string } }
	e.OK(t, bob, `query($r: Ref!) { artifact(ref: $r) { ref } }`, map[string]any{"r": *c.ResultRef}, &seen)
	if seen.Artifact != nil {
		t.Errorf("bob reads the figure of a private analysis")
	}
	e.OK(t, ada, `query($r: Ref!) { artifact(ref: $r) { ref } }`, map[string]any{"r": *c.ResultRef}, &seen)
	if seen.Artifact == nil {
		t.Errorf("ada, whose analysis it is, cannot read its figure")
	}
}

// The same input gives the same bytes, and Draw refuses Inf (a literal JSON
// cannot hold, but an overflowing one can).
func TestDrawIsDeterministic(t *testing.T) {
	content := []byte(`{"data": {"series": [{"x": [1, 2, 3], "y": [3, 1, 2]}]}}`)
	a, err := figure.Draw("t", content, figure.Args{FigureType: "line"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := figure.Draw("t", content, figure.Args{FigureType: "line"})
	if !bytes.Equal(a.SVG, b.SVG) {
		t.Error("two drawings of one input differ")
	}
	if _, err := figure.Draw("t", []byte(`{"data": {"series": [{"x": [1, 2], "y": [1, 1e999]}]}}`), figure.Args{FigureType: "line"}); err == nil ||
		!strings.Contains(err.Error(), "data.series[0].y[1] is 1e999: want a finite number") {
		t.Errorf("1e999: %v", err)
	}
	// 10^6 points: refused naming the cap, without parsing them all.
	var sb strings.Builder
	sb.WriteString(`{"data": {"series": [{"x": [`)
	for i := 0; i < 1_000_000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('1')
	}
	sb.WriteString(`], "y": []}]}}`)
	if _, err := figure.Draw("t", []byte(sb.String()), figure.Args{FigureType: "scatter"}); err == nil || !strings.Contains(err.Error(), "1000000 points: figure.generate draws at most 5000") {
		t.Errorf("10^6 points: %v", err)
	}
}
