package dispatch_test

import (
	"strings"
	"testing"
)

// The two action verbs shipped as tools record their results as artifacts
// of their own types, linked to what they are about: gate_run a gate_result
// evaluating the artifact, compare an analysis derived from both versions.
func TestActionVerbTools(t *testing.T) {
	e := env(t, nil)
	activate(t, e, manifest(t, "gate_run"))
	activate(t, e, manifest(t, "compare"))
	var created struct {
		CreateArtifact struct{ Ref, ContentHash string }
	}
	e.OK(t, alice(t), `mutation { createArtifact(input: {type: "hypothesis", title: "TREM2 R47H lowers microglial phagocytosis",
	  content: {target_gene: "TREM2", mechanism: "R47H lowers ligand binding, and with it the phagocytosis of amyloid-beta by microglia."}}) {
	  ... on WriteSuccess { ref contentHash } } }`, nil, &created)
	g := invoke(t, e, bob(t), "gate_run", map[string]any{"target": created.CreateArtifact.Ref, "gate": "artifact.basic"})
	if g.Status != "SUCCEEDED" || g.ResultRef == nil || !strings.HasPrefix(*g.ResultRef, "gate_result:") || len(g.OutputViolations) != 0 {
		t.Fatalf("gate_run: %+v", g)
	}
	var gr struct {
		Artifact struct {
			Verdict string
			Links   struct {
				Edges []struct {
					Node struct {
						Predicate string
						To        struct{ Ref string }
					}
				}
			}
		}
	}
	e.OK(t, bob(t), `query($r: Ref!) { artifact(ref: $r) { ... on GateResult { verdict } links { edges { node { predicate to { ref } } } } } }`,
		map[string]any{"r": *g.ResultRef}, &gr)
	if gr.Artifact.Verdict != "pass" || len(gr.Artifact.Links.Edges) != 1 || gr.Artifact.Links.Edges[0].Node.Predicate != "evaluates" {
		t.Fatalf("gate_result: %+v", gr.Artifact)
	}
	if c := invoke(t, e, bob(t), "gate_run", map[string]any{"target": created.CreateArtifact.Ref, "gate": "artifact.cited"}); c.Status != "SUCCEEDED" {
		t.Fatalf("cited gate: %+v", c)
	}

	unpinned := strings.SplitN(created.CreateArtifact.Ref, "@", 2)[0]
	var upd struct{ UpdateArtifact struct{ Ref string } }
	e.OK(t, alice(t), `mutation($r: Ref!, $h: String!) { updateArtifact(input: {ref: $r, baseContentHash: $h, patch: [{op: "add", path: "/confidence", value: 0.4}]}) {
	  ... on WriteSuccess { ref } } }`, map[string]any{"r": unpinned, "h": created.CreateArtifact.ContentHash}, &upd)
	c := invoke(t, e, bob(t), "compare", map[string]any{"from": created.CreateArtifact.Ref, "to": upd.UpdateArtifact.Ref})
	if c.Status != "SUCCEEDED" || c.ResultRef == nil || !strings.HasPrefix(*c.ResultRef, "analysis:") || !strings.Contains(string(c.Result), `"added":1`) {
		t.Fatalf("compare: %+v %s %+v", c, c.Result, c.Error)
	}
	var an struct {
		Artifact struct {
			AnalysisType string
			Links        struct {
				Edges []struct{ Node struct{ Predicate string } }
			}
		}
	}
	e.OK(t, bob(t), `query($r: Ref!) { artifact(ref: $r) { ... on Analysis { analysisType } links(predicates: ["derived_from"]) { edges { node { predicate } } } } }`,
		map[string]any{"r": *c.ResultRef}, &an)
	// Two versions of one artifact: one derived_from edge (a link joins
	// artifacts; the versions are in the analysis's inputs).
	if an.Artifact.AnalysisType != "comparison" || len(an.Artifact.Links.Edges) != 1 {
		t.Fatalf("analysis: %+v", an.Artifact)
	}
}
