package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/mcp"
)

type writeResult struct {
	Typename         string `json:"__typename"`
	Ref, ContentHash string
	Code, Message    string
	Retryable        bool
	YourBase         string
	Current          struct{ Ref, ContentHash string }
	DiffFromYourBase json.RawMessage
	MergeHint        struct {
		YourPatchReplaysCleanly  bool
		ConflictingPaths         []string
		MergedContent            json.RawMessage
		SuggestedBaseContentHash string
	}
	Problems []struct{ Path, Constraint, Message string }
}

func unpinned(ref string) string { r, _, _ := strings.Cut(ref, "@"); return r }

// An agent's round trip: create, read, update on a stale base (the conflict
// is data, with the merge hint, and writes nothing), then retry with the
// suggested base and the merged content.
func TestCreateGetUpdateWithAConflict(t *testing.T) {
	e := env(t, mcp.Options{})
	ada := mustConnect(t, e, apitest.Contributor(t, "ada"))
	grace := mustConnect(t, e, apitest.Contributor(t, "grace"))

	var created struct{ CreateArtifact writeResult }
	data(t, ada, "create_artifact", call(t, ada, "create_artifact", map[string]any{"input": map[string]any{
		"type": "hypothesis", "title": "TREM2", "content": map[string]any{"target_gene": "TREM2", "confidence": 0.5}}}), &created)
	c := created.CreateArtifact
	if c.Typename != "WriteSuccess" || !strings.HasPrefix(c.Ref, "hypothesis:") {
		t.Fatalf("create: %+v", c)
	}
	ref := unpinned(c.Ref)

	var got struct {
		Artifact struct {
			Ref, Title, ContentHash string
			Content                 map[string]any
			CreatedBy               struct{ ID string }
			IsLatest                bool
		}
	}
	data(t, ada, "get_artifact", call(t, ada, "get_artifact", map[string]any{"ref": ref}), &got)
	if got.Artifact.Title != "TREM2" || got.Artifact.ContentHash != c.ContentHash || got.Artifact.CreatedBy.ID != "ada" || !got.Artifact.IsLatest ||
		got.Artifact.Content["target_gene"] != "TREM2" {
		t.Fatalf("get: %+v", got.Artifact)
	}

	var theirs struct{ UpdateArtifact writeResult }
	data(t, grace, "update_artifact", call(t, grace, "update_artifact", map[string]any{"input": map[string]any{
		"ref": ref, "baseContentHash": c.ContentHash, "patch": []any{map[string]any{"op": "replace", "path": "/confidence", "value": 0.7}}}}), &theirs)
	if theirs.UpdateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("grace's update: %+v", theirs.UpdateArtifact)
	}

	before := e.Counts(t)
	res := call(t, ada, "update_artifact", map[string]any{"input": map[string]any{
		"ref": ref, "baseContentHash": c.ContentHash, "patch": []any{map[string]any{"op": "add", "path": "/disease", "value": "AD"}}}})
	if res.IsError {
		t.Fatalf("a version conflict is data, not an error result: %s", text(res))
	}
	var stale struct{ UpdateArtifact writeResult }
	data(t, ada, "update_artifact", res, &stale)
	vc := stale.UpdateArtifact
	if vc.Typename != "VersionConflict" || vc.YourBase != c.ContentHash || vc.Current.ContentHash != theirs.UpdateArtifact.ContentHash {
		t.Fatalf("stale update: %+v", vc)
	}
	hint := vc.MergeHint
	if !hint.YourPatchReplaysCleanly || len(hint.ConflictingPaths) != 0 || hint.SuggestedBaseContentHash != theirs.UpdateArtifact.ContentHash {
		t.Fatalf("merge hint: %+v", hint)
	}
	if after := e.Counts(t); !equalCounts(before, after) {
		t.Errorf("a conflict wrote: %v -> %v", before, after)
	}

	var retry struct{ UpdateArtifact writeResult }
	data(t, ada, "update_artifact", call(t, ada, "update_artifact", map[string]any{"input": map[string]any{
		"ref": ref, "baseContentHash": hint.SuggestedBaseContentHash, "content": hint.MergedContent}}), &retry)
	if retry.UpdateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("retry with the hint: %+v", retry.UpdateArtifact)
	}
	data(t, ada, "get_artifact", call(t, ada, "get_artifact", map[string]any{"ref": ref}), &got)
	if got.Artifact.Content["confidence"] != 0.7 || got.Artifact.Content["disease"] != "AD" {
		t.Errorf("after the retry the content keeps both changes: %v", got.Artifact.Content)
	}

	// A refusal of the write path is data too: ValidationFailed with its paths.
	var bad struct{ CreateArtifact writeResult }
	data(t, ada, "create_artifact", call(t, ada, "create_artifact", map[string]any{"input": map[string]any{
		"type": "hypothesis", "title": "x", "content": map[string]any{"confidence": "high"}}}), &bad)
	if bad.CreateArtifact.Typename != "ValidationFailed" || len(bad.CreateArtifact.Problems) == 0 {
		t.Errorf("invalid content: %+v", bad.CreateArtifact)
	}
}

// A batch over MCP: a later write names an earlier one by its alias
// ("$h", which no Ref pattern admits: the writes are given by reference to
// their tools' inputs, and the server validates them), and a write that
// breaks its input is refused by path, atomically.
func TestBatchNamesAnEarlierWriteByItsAlias(t *testing.T) {
	e := env(t, mcp.Options{})
	ada := mustConnect(t, e, apitest.Contributor(t, "ada"))
	var got struct {
		Batch struct {
			Committed bool
			Results   []writeResult
		}
	}
	data(t, ada, "batch", call(t, ada, "batch", map[string]any{"input": map[string]any{"writes": []any{
		map[string]any{"alias": "h", "createArtifact": map[string]any{"type": "hypothesis", "title": "TREM2", "content": map[string]any{"target_gene": "TREM2"}}},
		map[string]any{"addComment": map[string]any{"ref": "$h", "body": "Which cohort?", "kind": "question"}},
	}}}), &got)
	r := got.Batch.Results
	if !got.Batch.Committed || len(r) != 2 || r[0].Typename != "WriteSuccess" || r[1].Typename != "WriteSuccess" {
		t.Fatalf("batch: %+v", got.Batch)
	}
	var comments struct {
		Artifact struct{ Ref string }
	}
	data(t, ada, "get_artifact", call(t, ada, "get_artifact", map[string]any{"ref": unpinned(r[1].Ref)}), &comments)
	if comments.Artifact.Ref == "" {
		t.Fatalf("the comment %s cannot be read back", r[1].Ref)
	}

	before := e.Counts(t)
	res := call(t, ada, "batch", map[string]any{"input": map[string]any{"writes": []any{
		map[string]any{"alias": "h", "createArtifact": map[string]any{"type": "hypothesis", "title": "APOE", "content": map[string]any{"target_gene": "APOE"}}},
		map[string]any{"addComment": map[string]any{"ref": "$h"}},
	}}})
	if !res.IsError || !strings.Contains(text(res), `"writes",1,"addComment","body"`) {
		t.Fatalf("a batch whose comment has no body: want an error naming writes.1.addComment.body, got %s", text(res))
	}
	if after := e.Counts(t); !equalCounts(before, after) {
		t.Fatalf("the refused batch wrote: %v → %v", before, after)
	}
}
