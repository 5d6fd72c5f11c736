package server_test

import (
	"fmt"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/server"
)

// PrismQuery is the Prism page of docs/targets.md P1: one artifact, its first 20
// outgoing links, each target's title, type and signal summary.
const PrismQuery = `query Prism($ref: Ref!) {
  artifact(ref: $ref) {
    ref title type
    links(first: 20) {
      pageInfo { hasNextPage endCursor }
      edges { node {
        predicate
        to {
          ref title type
          signals { vote { score up down count } kinds { kind dimension aggregation value count quadraticTotal } }
        }
      } }
    }
  }
}`

// richPrismQuery asks more of the same page: creators, the root's own signals,
// typed fields, fragments, and the targets' own links.
const richPrismQuery = `query Rich($ref: Ref!) {
  artifact(ref: $ref) {
    ...envelope
    ... on Hypothesis { targetGene confidence }
    signals { vote { score } }
    links(first: 20) {
      edges { node {
        predicate createdBy { id }
        to { ...envelope signals { vote { score } kinds { kind value } } links(first: 5) { edges { node { to { title createdBy { id } } } } } }
      } }
    }
  }
}
fragment envelope on Artifact { ref title type createdBy { id kind } }`

// The Prism page costs the same number of SQL statements for 1, 5 or 20 links,
// whatever the mix of target types, and no more than docs/targets.md P2 allows.
func TestPrismPageStatementsAreConstant(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.ReportStatements = true }})
	tok := apitest.Contributor(t, "ada")
	counts := map[int]float64{}
	richCounts := map[int]float64{}
	for _, n := range []int{1, 5, 20} {
		main := createH(t, env, tok, map[string]any{"title": fmt.Sprintf("main %d", n), "content": map[string]any{"target_gene": "TREM2"}})
		types := []string{"hypothesis", "knowledge_gap", "experiment", "paper"}
		for i := 0; i < n; i++ {
			typ := types[i%len(types)]
			in := map[string]any{"type": typ, "title": fmt.Sprintf("target %d-%d", n, i)}
			pred := "related_to"
			switch typ {
			case "hypothesis":
				in["content"] = map[string]any{}
			case "knowledge_gap":
				in["content"] = map[string]any{"description": "gap"}
				pred = "addresses"
			case "experiment":
				in["content"] = map[string]any{"aim": "test"}
				pred = "tested_by"
			case "paper":
				in["id"] = fmt.Sprintf("PMID:%d%02d", n, i)
				in["content"] = map[string]any{"title": "p"}
				pred = "cites"
			}
			tgt := mustWrite(t, env, tok, "createArtifact", "CreateArtifactInput", in)
			mustWrite(t, env, tok, "addLink", "AddLinkInput", map[string]any{"from": unpinned(main.Ref), "predicate": pred, "to": unpinned(tgt.Ref)})
			mustWrite(t, env, apitest.Contributor(t, fmt.Sprintf("voter%d", i%3)), "addSignal", "AddSignalInput", map[string]any{"ref": unpinned(tgt.Ref), "kind": "vote", "value": 1})
		}
		rich := env.Post(t, tok, richPrismQuery, map[string]any{"ref": unpinned(main.Ref)})
		if len(rich.Errors) > 0 {
			t.Fatalf("%s", rich.Raw)
		}
		richCounts[n] = rich.Extensions["sqlStatements"].(float64)
		r := env.Post(t, tok, PrismQuery, map[string]any{"ref": unpinned(main.Ref)})
		if len(r.Errors) > 0 {
			t.Fatalf("%s", r.Raw)
		}
		var got struct {
			Artifact struct {
				Links struct {
					Edges []struct {
						Node struct {
							To struct {
								Title   string
								Signals struct{ Vote *struct{ Score, Count int } }
							}
						}
					}
				}
			}
		}
		if err := jsonUnmarshal(r.Data, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Artifact.Links.Edges) != n {
			t.Fatalf("%d links returned, want %d", len(got.Artifact.Links.Edges), n)
		}
		for _, e := range got.Artifact.Links.Edges {
			if e.Node.To.Title == "" || e.Node.To.Signals.Vote == nil || e.Node.To.Signals.Vote.Score != 1 {
				t.Errorf("target %+v", e.Node.To)
			}
		}
		c, ok := r.Extensions["sqlStatements"].(float64)
		if !ok {
			t.Fatalf("no sqlStatements extension: %s", r.Raw)
		}
		counts[n] = c
	}
	if counts[1] != counts[5] || counts[5] != counts[20] {
		t.Errorf("statements grow with links: %v", counts)
	}
	if counts[20] > 5 {
		t.Errorf("%v statements for the Prism page, want at most 5 (docs/targets.md P2)", counts[20])
	}
	if richCounts[1] != richCounts[5] || richCounts[5] != richCounts[20] {
		t.Errorf("statements of the richer page grow with links: %v", richCounts)
	}
	t.Logf("statements per Prism page: %v; richer page: %v", counts, richCounts)
}

// A list of artifacts with their creators and signals costs the same for 2 or 40.
func TestListStatementsAreConstant(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.ReportStatements = true }})
	tok := apitest.Contributor(t, "ada")
	q := `{ artifacts(type: "hypothesis", first: 100) { edges { node { title createdBy { id } signals { vote { score } }
	  comments(first: 3) { edges { node { title createdBy { id } } } } } } } }`
	counts := []float64{}
	made := 0
	for _, n := range []int{2, 40} {
		for ; made < n; made++ {
			h := createH(t, env, apitest.Contributor(t, fmt.Sprintf("author%d", made%7)), map[string]any{"title": fmt.Sprintf("h%d", made), "content": map[string]any{}})
			mustWrite(t, env, tok, "addComment", "AddCommentInput", map[string]any{"ref": unpinned(h.Ref), "body": "a remark"})
		}
		r := env.Post(t, tok, q, nil)
		if len(r.Errors) > 0 {
			t.Fatalf("%s", r.Raw)
		}
		counts = append(counts, r.Extensions["sqlStatements"].(float64))
	}
	if counts[0] != counts[1] {
		t.Errorf("statements for 2 and 40 artifacts: %v", counts)
	}
	t.Logf("statements per list: %v", counts)
}

// Lists are marshalled one element after another (cmd/gqlgen), so what their
// elements ask for must be loaded ahead: the provenance steps' actors and the
// forecasters of calibration histories cost the same for 2 or 12 artifacts,
// and so do the creators in each artifact's history.
func TestNestedActorsAreLoadedAhead(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.ReportStatements = true }})
	q := `{ artifacts(type: "hypothesis", first: 100) { edges { node { title
	  provenance { actor { id } }
	  signals { calibration { forecaster { id } probability } }
	  history(first: 3) { edges { node { createdBy { id } updatedBy { id } } } } } } } }`
	var counts []float64
	made := 0
	for _, n := range []int{2, 12} {
		for ; made < n; made++ {
			h := createH(t, env, apitest.Contributor(t, fmt.Sprintf("author%d", made)), map[string]any{"title": fmt.Sprintf("h%d", made), "content": map[string]any{}})
			for v := range 2 {
				if r := signal(t, env, fmt.Sprintf("forecaster%d-%d", made, v), unpinned(h.Ref), "calibration", 0.5, "default"); r.Typename != "WriteSuccess" {
					t.Fatalf("forecast: %+v", r)
				}
			}
		}
		r := env.Post(t, apitest.Contributor(t, "reader"), q, nil)
		if len(r.Errors) > 0 {
			t.Fatalf("%s", r.Raw)
		}
		var got struct {
			Artifacts struct {
				Edges []struct {
					Node struct {
						Title      string
						Provenance []struct{ Actor struct{ ID string } }
						Signals    struct {
							Calibration []struct{ Forecaster struct{ ID string } }
						}
						History struct {
							Edges []struct {
								Node struct{ CreatedBy, UpdatedBy struct{ ID string } }
							}
						}
					}
				}
			}
		}
		if err := jsonUnmarshal(r.Data, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Artifacts.Edges) != n {
			t.Fatalf("%d artifacts, want %d", len(got.Artifacts.Edges), n)
		}
		for _, e := range got.Artifacts.Edges {
			var i int
			if _, err := fmt.Sscanf(e.Node.Title, "h%d", &i); err != nil {
				t.Fatalf("title %q", e.Node.Title)
			}
			author := fmt.Sprintf("author%d", i)
			if len(e.Node.Provenance) != 1 || e.Node.Provenance[0].Actor.ID != author {
				t.Errorf("%s provenance %+v, want one step by %s", e.Node.Title, e.Node.Provenance, author)
			}
			var forecasters []string
			for _, c := range e.Node.Signals.Calibration {
				forecasters = append(forecasters, c.Forecaster.ID)
			}
			if want := []string{fmt.Sprintf("forecaster%d-0", i), fmt.Sprintf("forecaster%d-1", i)}; !sameSet(forecasters, want) {
				t.Errorf("%s forecasters %v, want %v", e.Node.Title, forecasters, want)
			}
			if h := e.Node.History.Edges; len(h) != 1 || h[0].Node.CreatedBy.ID != author || h[0].Node.UpdatedBy.ID != author {
				t.Errorf("%s history %+v, want one version by %s", e.Node.Title, h, author)
			}
		}
		counts = append(counts, r.Extensions["sqlStatements"].(float64))
	}
	// Each artifact's history is a statement of its own; nothing else grows.
	if grew := counts[1] - counts[0]; grew != 12-2 {
		t.Errorf("statements for 2 and 12 artifacts: %v; want them to differ by the 10 history reads only", counts)
	}
	t.Logf("statements: %v", counts)
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		if seen[x]--; seen[x] < 0 {
			return false
		}
	}
	return true
}
