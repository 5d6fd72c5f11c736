package compare

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/store"
)

func diff(patch string) *store.ArtifactDiff {
	return &store.ArtifactDiff{
		From:  &store.Artifact{Type: "hypothesis", ID: "h1", ContentHash: "aaa"},
		To:    &store.Artifact{Type: "hypothesis", ID: "h1", ContentHash: "bbb"},
		Patch: json.RawMessage(patch),
		Text:  []store.TextDiff{{Path: "/mechanism"}, {Path: "title"}},
	}
}

// The analysis counts the patch's operations by kind and says which text
// fields changed.
func TestAnalysis(t *testing.T) {
	p, summary, metrics, err := analysis(diff(`[{"op":"add","path":"/confidence","value":0.4},{"op":"replace","path":"/target_gene","value":"APOE"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Type != "analysis" || p.Title != "Changes from hypothesis:h1 to hypothesis:h1" {
		t.Errorf("create params %+v", p)
	}
	if want := "2 change(s)"; !strings.HasPrefix(summary, want) || !strings.Contains(summary, "1 added, 0 removed, 1 replaced; text fields changed: /mechanism, title.") {
		t.Errorf("summary %q", summary)
	}
	if metrics["changes"] != 2 || metrics["added"] != 1 || metrics["replaced"] != 1 || metrics["text_fields_changed"] != 2 {
		t.Errorf("metrics %v", metrics)
	}
	var c struct {
		AnalysisType string `json:"analysis_type"`
		Parameters   struct{ Patch []map[string]any }
	}
	if err := json.Unmarshal(p.Content, &c); err != nil || c.AnalysisType != "comparison" || len(c.Parameters.Patch) != 2 {
		t.Errorf("content %s (%v)", p.Content, err)
	}
}

// A patch that is not a JSON Patch is an error, not a comparison that found
// no changes.
func TestAnalysisRefusesABadPatch(t *testing.T) {
	for _, patch := range []string{`{"op":"add"}`, `[{"op":1}]`, `not json`} {
		if _, summary, _, err := analysis(diff(patch)); err == nil || !strings.Contains(err.Error(), "read the patch") {
			t.Errorf("patch %s: %v (summary %q), want an error reading the patch", patch, err, summary)
		}
	}
}
