package server_test

import (
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
)

type batchOut struct {
	Batch struct {
		Committed        bool
		RequestID        string
		IdempotentReplay bool
		Results          []result
	}
}

func runBatch(t *testing.T, env *apitest.Env, tok string, in map[string]any) (batchOut, *apitest.Response) {
	t.Helper()
	q := `mutation($in: BatchInput!) { batch(input: $in) { committed requestId idempotentReplay results { ` + selection(t, env, "WriteResult") + ` } } }`
	r := env.Post(t, tok, q, map[string]any{"in": in})
	var out batchOut
	if len(r.Errors) == 0 {
		if err := jsonUnmarshal(r.Data, &out); err != nil {
			t.Fatal(err)
		}
	}
	return out, r
}

func hyp(title string) map[string]any {
	return map[string]any{"createArtifact": map[string]any{"type": "hypothesis", "title": title, "content": map[string]any{"target_gene": "TREM2"}}}
}

// An atomic batch whose 5th write is invalid writes nothing, and says which write failed and why.
func TestAtomicBatchIsAllOrNothing(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	before := env.Counts(t)
	writes := []any{hyp("one"), hyp("two"), hyp("three"), hyp("four"),
		map[string]any{"createArtifact": map[string]any{"type": "hypothesis", "title": "five", "content": map[string]any{"confidence": "high"}}},
		hyp("six")}
	out, raw := runBatch(t, env, tok, map[string]any{"writes": writes})
	if len(raw.Errors) > 0 {
		t.Fatalf("%s", raw.Raw)
	}
	b := out.Batch
	if b.Committed || len(b.Results) != 6 {
		t.Fatalf("committed=%v, %d results", b.Committed, len(b.Results))
	}
	for i, r := range b.Results {
		switch {
		case i < 4:
			if r.Typename != "NotCommitted" || !strings.Contains(r.Message, "rolled back: writes[4] failed") {
				t.Errorf("write %d: %+v", i, r)
			}
		case i == 4:
			if r.Typename != "ValidationFailed" || r.Problems[0].Path != "content.confidence" {
				t.Errorf("write 4: %+v", r)
			}
		default:
			if r.Typename != "NotCommitted" || !strings.Contains(r.Message, "not attempted") {
				t.Errorf("write %d: %+v", i, r)
			}
		}
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("a failed atomic batch wrote: %v -> %v", before, after)
	}
}

// A non-atomic batch commits what it can and reports each write's outcome.
func TestNonAtomicBatchReportsEachWrite(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	writes := []any{hyp("one"),
		map[string]any{"createArtifact": map[string]any{"type": "nosuch", "title": "x", "content": map[string]any{}}},
		hyp("three"),
		map[string]any{"addLink": map[string]any{"from": "hypothesis:missing", "predicate": "related_to", "to": "hypothesis:other"}}}
	out, raw := runBatch(t, env, tok, map[string]any{"writes": writes, "atomic": false})
	if len(raw.Errors) > 0 {
		t.Fatalf("%s", raw.Raw)
	}
	got := []string{}
	for _, r := range out.Batch.Results {
		got = append(got, r.Typename)
	}
	if !out.Batch.Committed || strings.Join(got, ",") != "WriteSuccess,ValidationFailed,WriteSuccess,NotFound" {
		t.Fatalf("committed=%v results %v", out.Batch.Committed, got)
	}
	if n := env.Count(t, "artifacts WHERE type = 'hypothesis'"); n != 2 {
		t.Errorf("%d hypotheses written, want 2", n)
	}
}

// Aliases let later writes of a batch refer to earlier ones.
func TestBatchAliases(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	writes := []any{
		map[string]any{"alias": "paper", "createArtifact": map[string]any{"type": "paper", "id": "PMID:23150908", "title": "Variant of TREM2", "content": map[string]any{"title": "Variant of TREM2"}}},
		map[string]any{"alias": "h", "createArtifact": map[string]any{"type": "hypothesis", "title": "TREM2 [PMID:23150908]", "content": map[string]any{"target_gene": "TREM2"}}},
		map[string]any{"addLink": map[string]any{"from": "$h", "predicate": "cites", "to": "$paper"}},
		map[string]any{"cite": map[string]any{"ref": "$h", "pmid": "23150908", "claim": "R47H raises risk"}},
		map[string]any{"alias": "c", "addComment": map[string]any{"ref": "$h", "body": "Which cohort?"}},
		map[string]any{"addComment": map[string]any{"ref": "$h", "body": "Iceland.", "threadParent": "$c"}},
		map[string]any{"updateArtifact": map[string]any{"ref": "$h", "baseContentHash": "$h", "patch": []any{map[string]any{"op": "add", "path": "/disease", "value": "AD"}}}},
	}
	out, raw := runBatch(t, env, tok, map[string]any{"writes": writes})
	if len(raw.Errors) > 0 {
		t.Fatalf("%s", raw.Raw)
	}
	if !out.Batch.Committed {
		t.Fatalf("not committed: %+v", out.Batch.Results)
	}
	for i, r := range out.Batch.Results {
		if r.Typename != "WriteSuccess" {
			t.Fatalf("write %d: %+v", i, r)
		}
	}
	if w := out.Batch.Results[3].Warnings; len(w) != 1 || !strings.Contains(w[0], "already existed") {
		t.Errorf("citing twice should say the link existed: %v", w)
	}
	h := unpinned(out.Batch.Results[1].Ref)
	var got struct {
		Artifact struct {
			Content map[string]any
			Links   struct {
				Edges []struct {
					Node struct {
						Predicate string
						To        struct{ ID string }
					}
				}
			}
			Comments struct {
				TotalCount int
				Edges      []struct {
					Node struct {
						Content map[string]any
					}
				}
			}
		}
	}
	env.OK(t, tok, `query($r: Ref!) { artifact(ref: $r) { content links { edges { node { predicate to { id } } } } comments { totalCount edges { node { content } } } } }`,
		map[string]any{"r": h}, &got)
	a := got.Artifact
	if a.Content["disease"] != "AD" || len(a.Links.Edges) != 1 || a.Links.Edges[0].Node.To.ID != "paper:PMID:23150908" || a.Links.Edges[0].Node.Predicate != "cites" {
		t.Errorf("artifact after batch: %+v", a)
	}
	if a.Comments.TotalCount != 2 || a.Comments.Edges[1].Node.Content["thread_parent"] == nil {
		t.Errorf("comments: %+v", a.Comments)
	}

	// Unknown aliases, two operations in one write, and keys on writes are refused whole.
	for name, in := range map[string]map[string]any{
		"unknown alias": {"writes": []any{map[string]any{"addComment": map[string]any{"ref": "$nope", "body": "x"}}}},
		"two ops":       {"writes": []any{map[string]any{"createArtifact": hyp("x")["createArtifact"], "addComment": map[string]any{"ref": h, "body": "x"}}}},
		"key on write":  {"writes": []any{map[string]any{"addComment": map[string]any{"ref": h, "body": "x", "idempotencyKey": "k"}}}},
		"empty":         {"writes": []any{}},
	} {
		out, raw := runBatch(t, env, tok, in)
		refused := len(raw.Errors) > 0 && raw.Errors[0].Code() == "VALIDATION_FAILED"
		if !refused && !(len(out.Batch.Results) == 1 && out.Batch.Results[0].Typename == "ValidationFailed") {
			t.Errorf("%s: %s", name, raw.Raw)
		}
	}
}

// A batch's result is stored under its idempotency key.
func TestBatchIdempotency(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	in := map[string]any{"writes": []any{hyp("a"), hyp("b")}, "idempotencyKey": "batch-1"}
	first, _ := runBatch(t, env, tok, in)
	again, _ := runBatch(t, env, tok, in)
	if !again.Batch.IdempotentReplay || again.Batch.RequestID != first.Batch.RequestID || again.Batch.Results[1].Ref != first.Batch.Results[1].Ref {
		t.Errorf("replay: %+v vs %+v", again.Batch, first.Batch)
	}
	if n := env.Count(t, "artifacts WHERE type = 'hypothesis'"); n != 2 {
		t.Errorf("%d hypotheses, want 2", n)
	}
	_, raw := runBatch(t, env, tok, map[string]any{"writes": []any{hyp("c")}, "idempotencyKey": "batch-1"})
	if len(raw.Errors) != 1 || raw.Errors[0].Code() != "IDEMPOTENCY_KEY_REUSE" {
		t.Errorf("reuse: %s", raw.Raw)
	}
}
