package server_test

import (
	"fmt"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/server"
)

// PrismQuery is the Prism page of TARGETS.md P1: one artifact, its first 20
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
// whatever the mix of target types, and no more than TARGETS.md P2 allows.
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
		t.Errorf("%v statements for the Prism page, want at most 5 (TARGETS.md P2)", counts[20])
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
