package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
)

func TestUpdateWritesANewVersion(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	c := createH(t, env, tok, map[string]any{"title": "TREM2 hypothesis", "content": map[string]any{"target_gene": "TREM2", "confidence": 0.5}})
	ref := unpinned(c.Ref)

	// Whole content.
	u1 := update(t, env, tok, map[string]any{"ref": ref, "baseContentHash": c.ContentHash, "content": map[string]any{"target_gene": "TREM2", "confidence": 0.6}})
	if u1.Typename != "WriteSuccess" || u1.ContentHash == c.ContentHash {
		t.Fatalf("update: %+v", u1)
	}
	// RFC 6902 patch, plus title.
	u2 := update(t, env, tok, map[string]any{"ref": ref, "baseContentHash": u1.ContentHash, "title": "TREM2 hypothesis, refined",
		"patch": []any{map[string]any{"op": "add", "path": "/disease", "value": "Alzheimer's disease"}}})
	if u2.Typename != "WriteSuccess" {
		t.Fatalf("patch: %+v", u2)
	}
	var a struct {
		Title    string
		Content  map[string]any
		Revision int
	}
	_ = json.Unmarshal(u2.Artifact, &a)
	if a.Title != "TREM2 hypothesis, refined" || a.Content["disease"] != "Alzheimer's disease" || a.Content["confidence"] != 0.6 || a.Revision != 3 {
		t.Errorf("after patch: %+v", a)
	}
	// No change: no new version, a warning.
	u3 := update(t, env, tok, map[string]any{"ref": ref, "baseContentHash": u2.ContentHash, "title": "TREM2 hypothesis, refined"})
	if u3.Typename != "WriteSuccess" || u3.ContentHash != u2.ContentHash || len(u3.Warnings) == 0 {
		t.Errorf("no-op update: %+v", u3)
	}

	// History: every version, newest first, paged.
	var h struct {
		Artifact struct {
			History struct {
				TotalCount int
				Edges      []struct {
					Node struct {
						ID, ContentHash string
						Revision        int
						IsLatest        bool
					}
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   string
				}
			}
		}
	}
	q := `query($r: Ref!, $after: Cursor) { artifact(ref: $r) { history(first: 2, after: $after) { totalCount edges { node { id contentHash revision isLatest } } pageInfo { hasNextPage endCursor } } } }`
	env.OK(t, tok, q, map[string]any{"r": ref}, &h)
	hist := h.Artifact.History
	if hist.TotalCount != 3 || len(hist.Edges) != 2 || !hist.PageInfo.HasNextPage ||
		hist.Edges[0].Node.Revision != 3 || !hist.Edges[0].Node.IsLatest || hist.Edges[1].Node.Revision != 2 || hist.Edges[1].Node.IsLatest {
		t.Fatalf("history page 1: %+v", hist)
	}
	if hist.Edges[1].Node.ID != ref+"@"+u1.ContentHash {
		t.Errorf("an older version's id is its pinned ref, got %s", hist.Edges[1].Node.ID)
	}
	env.OK(t, tok, q, map[string]any{"r": ref, "after": hist.PageInfo.EndCursor}, &h)
	if len(h.Artifact.History.Edges) != 1 || h.Artifact.History.Edges[0].Node.ContentHash != c.ContentHash || h.Artifact.History.PageInfo.HasNextPage {
		t.Fatalf("history page 2: %+v", h.Artifact.History)
	}

	// A pinned ref returns that exact version.
	var pinned struct {
		Artifact struct {
			Content  map[string]any
			IsLatest bool
			Revision int
		}
	}
	env.OK(t, tok, `query($r: Ref!) { artifact(ref: $r) { content isLatest revision } }`, map[string]any{"r": c.Ref}, &pinned)
	if pinned.Artifact.Content["confidence"] != 0.5 || pinned.Artifact.IsLatest || pinned.Artifact.Revision != 1 {
		t.Errorf("pinned first version: %+v", pinned.Artifact)
	}

	// diff between versions: JSON Patch and text diffs.
	var d struct {
		Diff struct {
			Patch     []map[string]any
			TextDiffs []struct {
				Path, Unified string
				Ops           []struct{ Op, Text string }
			}
		}
	}
	env.OK(t, tok, `query($a: Ref!, $b: Ref!) { diff(from: $a, to: $b) { patch textDiffs { path unified ops { op text } } } }`,
		map[string]any{"a": c.Ref, "b": u2.Ref}, &d)
	ops := map[string]bool{}
	for _, op := range d.Diff.Patch {
		ops[op["op"].(string)+" "+op["path"].(string)] = true
	}
	if !ops["replace /confidence"] || !ops["add /disease"] {
		t.Errorf("diff patch %v", d.Diff.Patch)
	}
	if len(d.Diff.TextDiffs) != 1 || d.Diff.TextDiffs[0].Path != "title" || !strings.Contains(d.Diff.TextDiffs[0].Unified, "+TREM2 hypothesis, refined") {
		t.Errorf("text diffs %+v", d.Diff.TextDiffs)
	}
}

func TestUpdateRefusals(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	reviewer := apitest.Token(t, "rosalind", auth.PermReviewer)
	h := createH(t, env, tok, map[string]any{"title": "h", "content": map[string]any{}})
	paper := mustWrite(t, env, tok, "createArtifact", "CreateArtifactInput", map[string]any{"type": "paper", "id": "PMID:1", "title": "p", "content": map[string]any{"title": "p"}})
	comment := mustWrite(t, env, tok, "addComment", "AddCommentInput", map[string]any{"ref": unpinned(h.Ref), "body": "nice"})
	analysis := mustWrite(t, env, tok, "createArtifact", "CreateArtifactInput", map[string]any{"type": "analysis", "title": "a", "content": map[string]any{"question": "q?"}})

	before := env.Counts(t)
	cases := []struct {
		name     string
		token    string
		in       map[string]any
		typename string
		check    func(t *testing.T, r result)
	}{
		{"immutable paper", tok, map[string]any{"ref": unpinned(paper.Ref), "baseContentHash": paper.ContentHash, "title": "changed"}, "MutabilityViolation",
			func(t *testing.T, r result) {
				if r.Mutability != "immutable" || r.Code != "MUTABILITY_VIOLATION" {
					t.Errorf("%+v", r)
				}
			}},
		{"append-only comment", tok, map[string]any{"ref": unpinned(comment.Ref), "baseContentHash": comment.ContentHash, "title": "edited"}, "MutabilityViolation", nil},
		{"superseded-only analysis content", tok, map[string]any{"ref": unpinned(analysis.Ref), "baseContentHash": analysis.ContentHash,
			"content": map[string]any{"question": "other?"}}, "MutabilityViolation", nil},
		{"unknown artifact", tok, map[string]any{"ref": "hypothesis:nope", "baseContentHash": h.ContentHash, "title": "x"}, "NotFound", nil},
		{"malformed ref", tok, map[string]any{"ref": "nope", "baseContentHash": h.ContentHash, "title": "x"}, "ValidationFailed", nil},
		{"content and patch", tok, map[string]any{"ref": unpinned(h.Ref), "baseContentHash": h.ContentHash, "content": map[string]any{}, "patch": []any{}}, "ValidationFailed", nil},
		{"patch that does not apply", tok, map[string]any{"ref": unpinned(h.Ref), "baseContentHash": h.ContentHash,
			"patch": []any{map[string]any{"op": "remove", "path": "/nope"}}}, "ValidationFailed", func(t *testing.T, r result) {
			if r.Problems[0].Path != "patch[0]" {
				t.Errorf("%+v", r.Problems)
			}
		}},
		{"invalid content", tok, map[string]any{"ref": unpinned(h.Ref), "baseContentHash": h.ContentHash, "content": map[string]any{"confidence": 7}}, "ValidationFailed", nil},
		{"undeclared transition", tok, map[string]any{"ref": unpinned(h.Ref), "baseContentHash": h.ContentHash, "lifecycleState": "supported"}, "LifecycleViolation",
			func(t *testing.T, r result) {
				if r.From == nil || *r.From != "proposed" || r.To != "supported" || !strings.Contains(r.Message, "no transition") {
					t.Errorf("%+v", r)
				}
			}},
		{"unknown state", tok, map[string]any{"ref": unpinned(h.Ref), "baseContentHash": h.ContentHash, "lifecycleState": "proven"}, "ValidationFailed", nil},
		{"viewer", apitest.Token(t, "vera", auth.PermViewer), map[string]any{"ref": unpinned(h.Ref), "baseContentHash": h.ContentHash, "title": "x"}, "PermissionDenied", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := update(t, env, c.token, c.in)
			if r.Typename != c.typename {
				t.Fatalf("got %s (%s %+v), want %s", r.Typename, r.Message, r.Problems, c.typename)
			}
			if r.RequestID == "" || r.Message == "" {
				t.Errorf("problem without message or request id: %+v", r)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("refused updates wrote: %v -> %v", before, after)
	}

	// Lifecycle: the owner may send it to review; only a reviewer may decide.
	r := update(t, env, tok, map[string]any{"ref": unpinned(h.Ref), "baseContentHash": h.ContentHash, "lifecycleState": "under_review"})
	if r.Typename != "WriteSuccess" {
		t.Fatalf("to review: %+v", r)
	}
	r2 := update(t, env, tok, map[string]any{"ref": unpinned(h.Ref), "baseContentHash": r.ContentHash, "lifecycleState": "supported"})
	if r2.Typename != "LifecycleViolation" || !strings.Contains(r2.Message, "reviewer") {
		t.Fatalf("contributor deciding: %+v", r2)
	}
	r3 := update(t, env, reviewer, map[string]any{"ref": unpinned(h.Ref), "baseContentHash": r.ContentHash, "lifecycleState": "supported"})
	if r3.Typename != "WriteSuccess" {
		t.Fatalf("reviewer deciding: %+v", r3)
	}
	// A superseded-only type still moves through its lifecycle.
	r4 := update(t, env, tok, map[string]any{"ref": unpinned(analysis.Ref), "baseContentHash": analysis.ContentHash, "lifecycleState": "final"})
	if r4.Typename != "WriteSuccess" {
		t.Errorf("analysis draft -> final: %+v", r4)
	}
}

// A stale base writes nothing and explains how to retry without losing anyone's change.
func TestVersionConflictCarriesAMergeHint(t *testing.T) {
	env := apitest.New(t)
	ada := apitest.Contributor(t, "ada")
	grace := apitest.Contributor(t, "grace")
	base := createH(t, env, ada, map[string]any{"title": "TREM2", "content": map[string]any{
		"target_gene": "TREM2", "confidence": 0.5, "mechanism": "line one\nline two\nline three\n",
		"evidence_for": []any{map[string]any{"claim": "a", "source": "s1"}}}})
	ref := unpinned(base.Ref)
	theirs := update(t, env, grace, map[string]any{"ref": ref, "baseContentHash": base.ContentHash, "patch": []any{
		map[string]any{"op": "replace", "path": "/confidence", "value": 0.7},
		map[string]any{"op": "replace", "path": "/mechanism", "value": "LINE ONE\nline two\nline three\n"},
		map[string]any{"op": "add", "path": "/evidence_for/-", "value": map[string]any{"claim": "b", "source": "s2"}}}})
	if theirs.Typename != "WriteSuccess" {
		t.Fatalf("theirs: %+v", theirs)
	}
	before := env.Counts(t)

	// Non-overlapping: a different field, another line of the text field, and an
	// append to the append-only evidence list.
	mine := update(t, env, ada, map[string]any{"ref": ref, "baseContentHash": base.ContentHash, "patch": []any{
		map[string]any{"op": "add", "path": "/disease", "value": "AD"},
		map[string]any{"op": "replace", "path": "/mechanism", "value": "line one\nline two\nLINE THREE\n"},
		map[string]any{"op": "add", "path": "/evidence_for/-", "value": map[string]any{"claim": "c", "source": "s3"}}}})
	if mine.Typename != "VersionConflict" || mine.Code != "VERSION_CONFLICT" || !mine.Retryable {
		t.Fatalf("stale update: %+v", mine)
	}
	if mine.YourBase != base.ContentHash || mine.Current.ContentHash != theirs.ContentHash || mine.ChangedBy.ID != "grace" {
		t.Errorf("conflict envelope: base %s current %s by %v", mine.YourBase, mine.Current.ContentHash, mine.ChangedBy)
	}
	var diff []map[string]any
	_ = json.Unmarshal(mine.DiffFromYourBase, &diff)
	if len(diff) < 2 {
		t.Errorf("diffFromYourBase %s", mine.DiffFromYourBase)
	}
	hint := mine.MergeHint
	if !hint.YourPatchReplaysCleanly || len(hint.ConflictingPaths) != 0 || hint.SuggestedBaseContentHash != theirs.ContentHash {
		t.Fatalf("hint: %+v", hint)
	}
	var merged map[string]any
	_ = json.Unmarshal(hint.MergedContent, &merged)
	if merged["confidence"] != 0.7 || merged["disease"] != "AD" || merged["mechanism"] != "LINE ONE\nline two\nLINE THREE\n" || len(merged["evidence_for"].([]any)) != 3 {
		t.Errorf("merged content %s", hint.MergedContent)
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("a conflict wrote: %v -> %v", before, after)
	}
	// Retrying with the hint succeeds and keeps both changes.
	retry := update(t, env, ada, map[string]any{"ref": ref, "baseContentHash": hint.SuggestedBaseContentHash, "content": json.RawMessage(hint.MergedContent)})
	if retry.Typename != "WriteSuccess" {
		t.Fatalf("retry: %+v", retry)
	}

	// Overlapping: grace, still on her version, edits the line next to the one ada
	// changed (a conflict) and the disease ada added (a conflict), and the
	// confidence nobody else touched since (no conflict).
	clash := update(t, env, grace, map[string]any{"ref": ref, "baseContentHash": theirs.ContentHash, "patch": []any{
		map[string]any{"op": "replace", "path": "/confidence", "value": 0.1},
		map[string]any{"op": "add", "path": "/disease", "value": "PD"},
		map[string]any{"op": "replace", "path": "/mechanism", "value": "LINE ONE\nline 2\nline three\n"}}})
	if clash.Typename != "VersionConflict" {
		t.Fatalf("clash: %+v", clash)
	}
	if clash.MergeHint.YourPatchReplaysCleanly || string(clash.MergeHint.MergedContent) != "null" {
		t.Errorf("overlapping edits reported as clean: %+v", clash.MergeHint)
	}
	if got := strings.Join(clash.MergeHint.ConflictingPaths, " "); got != "/disease /mechanism" {
		t.Errorf("conflicting paths %q, want \"/disease /mechanism\"", got)
	}
}
