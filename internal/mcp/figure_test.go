package mcp_test

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/mcp"
)

// figure.generate over MCP: tool.figure.generate draws an analysis's data as
// a figure (its SVG parses, one circle per point, the markup in the title
// escaped), and an undeclared figure type is refused naming the declared ones.
func TestFigureGenerateTool(t *testing.T) {
	e := env(t, mcp.Options{Mutations: mcp.MutationsAll})
	cs := mustConnect(t, e, apitest.Contributor(t, "ada"))
	var out struct {
		CreateArtifact struct{ Ref string }
	}
	data(t, cs, "create_artifact", call(t, cs, "create_artifact", map[string]any{"input": map[string]any{"type": "analysis", "title": "PK",
		"content": map[string]any{"question": "How fast?", "data": map[string]any{"x": map[string]any{"unit": "h"}, "y": map[string]any{"unit": "mg/L"},
			"series": []any{map[string]any{"x": []any{0.5, 1, 2, 4}, "y": []any{4, 8, 6, 3}}}}}}}), &out)
	res := call(t, cs, "tool.figure.generate", map[string]any{"analysis": out.CreateArtifact.Ref, "figure_type": "concentration_time", "title": "<img src=x onerror=alert(1)>"})
	raw, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		t.Fatalf("tool.figure.generate: %s", text(res))
	}
	var got struct {
		FigureURL string `json:"figure_url"`
		Points    int
	}
	if err := json.Unmarshal(raw, &got); err != nil || got.Points != 4 || !strings.HasPrefix(got.FigureURL, "/artifacts/figure:") {
		t.Fatalf("its answer: %s", raw)
	}
	var fig struct {
		Artifact struct {
			Content struct{ SVG string }
		}
	}
	ref := strings.TrimSuffix(strings.TrimPrefix(got.FigureURL, "/artifacts/"), "/figure.svg")
	data(t, cs, "get_artifact", call(t, cs, "get_artifact", map[string]any{"ref": ref}), &fig)
	svg := fig.Artifact.Content.SVG
	points, imgs := 0, 0
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local == "img" {
				imgs++
			}
			for _, a := range se.Attr {
				if a.Name.Local == "class" && a.Value == "point" {
					points++
				}
			}
		}
	}
	if points != 4 || imgs != 0 || !strings.Contains(svg, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("%d points, %d img elements:\n%s", points, imgs, svg)
	}
	bad := call(t, cs, "tool.figure.generate", map[string]any{"analysis": out.CreateArtifact.Ref, "figure_type": "pie"})
	if !bad.IsError || !strings.Contains(text(bad), "line, scatter, bar, concentration_time") {
		t.Errorf("an undeclared type: %s", text(bad))
	}
}
