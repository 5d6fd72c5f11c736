package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/wI2L/jsondiff"

	"github.com/scidex/substrate/internal/merge"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/schema"
)

// Conflict is the body of a VERSION_CONFLICT: everything a writer needs to
// retry without losing anyone's change.
type Conflict struct {
	YourBase string
	Current  *Artifact
	// DiffFromYourBase is the RFC 6902 patch from the base version to the current one.
	DiffFromYourBase json.RawMessage
	Hint             MergeHint
}

// MergeHint is the three-way merge of base, current ("theirs") and the update.
type MergeHint struct {
	YourPatchReplaysCleanly  bool
	ConflictingPaths         []string
	MergedContent            json.RawMessage // nil unless the merge is clean
	MergedTitle              string
	SuggestedBaseContentHash string
}

// conflict builds the VersionConflict for an update whose base is stale.
func (s *Store) conflict(ctx context.Context, w *writer, t *schema.Type, cur *Artifact, p UpdateParams) error {
	c := &Conflict{YourBase: p.BaseContentHash, Current: cur}
	c.Hint.SuggestedBaseContentHash = cur.ContentHash
	prob := problem.New(problem.VersionConflict,
		"%s changed since %s: it is now %s (by %s at %s)", cur.Unpinned(), p.BaseContentHash, cur.ContentHash,
		cur.UpdatedBy, cur.UpdatedAt.Format("2006-01-02T15:04:05Z07:00"))
	prob.Refs = []string{cur.Ref().String()}
	prob.Extra = c

	baseRow, err := w.q.ArtifactVersionGetByHash(ctx, cur.PK, p.BaseContentHash)
	if errors.Is(err, pgx.ErrNoRows) {
		// A base that was never a version of this artifact cannot be merged from.
		c.DiffFromYourBase = json.RawMessage("[]")
		c.Hint.ConflictingPaths = []string{"/"}
		prob.Message = fmt.Sprintf("%s has no version %s; its current version is %s", cur.Unpinned(), p.BaseContentHash, cur.ContentHash)
		return prob
	}
	if err != nil {
		return fmt.Errorf("load base version: %w", err)
	}
	base := atVersion(cur, baseRow)
	diff, err := jsondiff.CompareJSON(base.Content, cur.Content)
	if err != nil {
		return fmt.Errorf("diff base to current: %w", err)
	}
	if c.DiffFromYourBase, err = json.Marshal(diff); err != nil {
		return fmt.Errorf("encode diff: %w", err)
	}
	if diff == nil {
		c.DiffFromYourBase = json.RawMessage("[]")
	}

	yours, err := nextFields(base, p)
	if err != nil {
		// The patch does not even apply to the base it names.
		c.Hint.ConflictingPaths = []string{"/"}
		return prob
	}
	res, err := merge.JSON(base.Content, cur.Content, yours.Content, merge.Rules{
		TextFields: t.Doc.Merge.TextFields, AppendOnlyArrays: t.Doc.Merge.AppendOnlyArrays,
	})
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	conflicts := res.Conflicts
	title, titleOK := mergeScalar(base.Title, cur.Title, yours.Title)
	if !titleOK {
		conflicts = append(conflicts, "title")
	}
	if _, ok := mergeScalar(deref(base.LifecycleState), deref(cur.LifecycleState), deref(yours.LifecycleState)); !ok {
		conflicts = append(conflicts, "lifecycleState")
	}
	c.Hint.ConflictingPaths = conflicts
	c.Hint.YourPatchReplaysCleanly = len(conflicts) == 0
	c.Hint.MergedTitle = title
	if len(conflicts) == 0 {
		c.Hint.MergedContent = res.Merged
	}
	if c.Hint.ConflictingPaths == nil {
		c.Hint.ConflictingPaths = []string{}
	}
	return prob
}

// mergeScalar merges one plain value three ways.
func mergeScalar(base, theirs, yours string) (string, bool) {
	switch {
	case theirs == yours, yours == base:
		return theirs, true
	case theirs == base:
		return yours, true
	}
	return theirs, false
}
