package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/pgjson"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/schema"
)

// UpdateParams is the input of updateArtifact. Exactly one of Content (the whole
// new content) and Patch (RFC 6902 operations on the current content) may be
// given; with neither, content stays as it is.
type UpdateParams struct {
	Ref             string          `json:"ref"`
	BaseContentHash string          `json:"baseContentHash"`
	Content         json.RawMessage `json:"content,omitempty"`
	Patch           json.RawMessage `json:"patch,omitempty"`
	Title           *string         `json:"title,omitempty"`
	LifecycleState  *string         `json:"lifecycleState,omitempty"`
	IdempotencyKey  string          `json:"-"`

	// operation names the write in the journal when it is not updateArtifact
	// (ackMessage records a recipient's acknowledgement in the message).
	operation string
	// event names the updated event when a server operation says so
	// (tool_call.completed); see ServerOpts.
	event string
}

// UpdateArtifact writes a new version of a mutable artifact, if the caller's base
// is still the current version.
func (s *Store) UpdateArtifact(ctx context.Context, p UpdateParams) (*WriteResult, error) {
	res, replay, err := write(ctx, s, writeOp{Operation: "updateArtifact", IdempotencyKey: p.IdempotencyKey, Input: p,
		SingleStatement: !strings.HasPrefix(p.Ref, schema.MetaType+":")},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.update(ctx, w, p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

func (s *Store) update(ctx context.Context, w *writer, p UpdateParams) (*WriteResult, error) {
	r, err := ref.Parse(p.Ref)
	if err != nil {
		return nil, problem.Invalid(problem.Field("ref", "ref", err.Error(), p.Ref))
	}
	if r.IsPinned() && p.BaseContentHash != "" && r.Hash != p.BaseContentHash {
		return nil, problem.Invalid(problem.Field("ref", "ref", "a pinned ref must name the same version as baseContentHash; pass the unpinned ref", p.Ref))
	}
	if p.BaseContentHash == "" && r.IsPinned() {
		p.BaseContentHash = r.Hash
	}
	// The row this process last wrote, when the update is based on it and is
	// one statement (nothing it does commits unless all of it does); else a
	// read without a lock. Either way the write only happens if the row is
	// still as it was taken, so no lock is held across the validation between.
	var cur *Artifact
	if w.tx == nil {
		cur = s.current.get(r.Type, r.ID, p.BaseContentHash)
	}
	remembered := cur != nil
	for attempt := 1; ; attempt++ {
		if cur == nil {
			row, err := w.q.ArtifactGetByTypeID(ctx, r.Type, r.ID)
			if errors.Is(err, pgx.ErrNoRows) {
				s.current.forget(r.Type, r.ID)
				return nil, problem.NotFoundRef(r.Unpinned().String())
			}
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", r.Unpinned(), err)
			}
			cur = fromRow(row)
		}
		res, err := s.updateFrom(ctx, w, p, cur, remembered, attempt < maxUpdateAttempts)
		var moved *rowMoved
		switch {
		case errors.As(err, &moved):
			cur = moved.fresh
		case err != nil && remembered:
			// A refusal is an answer about the current row (it may have been
			// made public since): ask the database, not the cache. Nothing was
			// written: the write is one statement, and it did not succeed.
			cur = nil
		default:
			return res, err
		}
		s.current.forget(r.Type, r.ID)
		remembered = false
	}
}

// maxUpdateAttempts bounds how often an update starts again on a row that
// moved under it without its content changing (see rowMoved).
const maxUpdateAttempts = 3

// rowMoved is what an attempt at an update returns when the row it checked is
// not the row its write found, and the update should start again from fresh
// (nil: read it): the row was remembered (current.go) and is not current, or
// its envelope changed (visibility, participants, schema version) while its
// content stayed. A change of content is a VersionConflict instead.
type rowMoved struct{ fresh *Artifact }

func (*rowMoved) Error() string { return "the artifact's row moved during the update" }

// updateFrom is one attempt at an update from cur, the row as remembered
// (remembered) or as read; retry allows it to return rowMoved.
func (s *Store) updateFrom(ctx context.Context, w *writer, p UpdateParams, cur *Artifact, remembered, retry bool) (*WriteResult, error) {
	operation := p.operation
	if operation == "" {
		operation = "updateArtifact"
	}
	// A server operation writes its ledger whoever the request's actor may
	// read (an agent's completed packet finishes a call it may not read);
	// every other write touches only what its actor may read.
	if operations[operation] != opServer {
		if err := s.readable(ctx, w, cur); err != nil {
			return nil, err
		}
	}
	t, err := s.registry.GetWith(ctx, w.q, cur.Type)
	if err != nil {
		return nil, err
	}
	if err := allowWrite(t, "update", t.Doc.Policy.Update, operation, w.rc, cur.CreatedBy); err != nil {
		return nil, err
	}
	stateOnly := p.Content == nil && p.Patch == nil && (p.Title == nil || *p.Title == cur.Title) && p.LifecycleState != nil
	if err := checkMutable(t, cur, stateOnly); err != nil {
		return nil, err
	}
	if p.Content != nil && p.Patch != nil {
		return nil, problem.Invalid(problem.Field("patch", "oneOf", "give either content or patch, not both", nil))
	}
	if t.Doc.LockMode == "optimistic" && p.BaseContentHash == "" {
		return nil, problem.Invalid(problem.Detail{Path: "baseContentHash", Constraint: "required",
			Message:    "updates of " + t.Name() + " artifacts must name the contentHash they were based on",
			Suggestion: "read the artifact and pass its contentHash: " + cur.ContentHash})
	}
	if p.BaseContentHash != "" && p.BaseContentHash != cur.ContentHash {
		return nil, s.conflict(ctx, w, t, cur, p)
	}

	// Content stored at an older schema version is the base of this write
	// upgraded (evolve.go): the new version stores it at the current one.
	if err := s.upgradeTo(ctx, w.q, cur, t); err != nil {
		return nil, err
	}
	next, err := nextFields(cur, p)
	if err != nil {
		return nil, err
	}
	// A new version is reviewed; the same title and content again is none
	// (it stays "no change" below).
	warnings := []string{}
	if st, warn := reviewed(t, w.rc); st != nil && !stateOnly && (next.Title != cur.Title || !sameJSON(next.Content, cur.Content)) {
		next.LifecycleState, warnings = st, append(warnings, warn)
	}
	problems := serverFieldsOnUpdate(t, operation, cur.Content, next.Content)
	problems = append(problems, checkTitle(next.Title)...)
	problems = append(problems, t.ValidateContent(next.Content)...)
	problems = append(problems, checkContentSize(next.Content)...)
	if d := checkState(t, cur, next.LifecycleState); d != nil {
		problems = append(problems, *d)
	}
	if len(problems) > 0 {
		return nil, problem.Invalid(problems...)
	}
	content, err := compactJSON(next.Content)
	if err != nil {
		return nil, err
	}
	hash, err := canon.Hash(canon.Fields{Title: next.Title, Content: content, LifecycleState: next.LifecycleState})
	if err != nil {
		return nil, fmt.Errorf("content hash: %w", err)
	}
	if hash == cur.ContentHash {
		if remembered && retry {
			// "No change" is an answer about the current version: ask the
			// database, not the cache, what that is.
			return nil, &rowMoved{}
		}
		return &WriteResult{Ref: cur.Ref().String(), ContentHash: hash, RequestID: w.rc.RequestID,
			Warnings: []string{"no change: the new content is identical to the current version"}}, nil
	}
	var hook *schemaWrite
	if t.Name() == schema.MetaType {
		if hook, err = s.checkSchemaWrite(ctx, w, cur.ID, content); err != nil {
			return nil, err
		}
	}
	if err := s.runValidators(ctx, w, t, &ValidationInput{Operation: OpUpdate, ID: cur.ID, Title: next.Title, Content: content, State: next.LifecycleState, Prev: cur}); err != nil {
		return nil, err
	}
	if err := w.recordActor(ctx); err != nil {
		return nil, err
	}
	rc := w.rc
	pinned := ref.Ref{Type: cur.Type, ID: cur.ID, Hash: hash}.String()
	payload := map[string]any{"ref": pinned, "type": cur.Type, "id": cur.ID, "title": next.Title,
		"contentHash": hash, "previousContentHash": cur.ContentHash}
	if next.LifecycleState != nil && (cur.LifecycleState == nil || *cur.LifecycleState != *next.LifecycleState) {
		payload["lifecycleState"] = *next.LifecycleState
	}
	pb, _ := json.Marshal(payload)
	audience, err := w.audience(ctx, cur)
	if err != nil {
		return nil, err
	}
	m := w.meta(operation, pinned)
	key, reqHash, stored, expires, err := w.claimParams(&WriteResult{Ref: pinned, ContentHash: hash, RequestID: rc.RequestID, Warnings: warnings})
	if err != nil {
		return nil, err
	}
	written, err := w.q.ArtifactUpdateWrite(ctx, dbsqlc.ArtifactUpdateWriteParams{
		Title: next.Title, Content: pgjson.JSON(content), ContentHash: hash, LifecycleState: next.LifecycleState, SchemaVersion: int32(t.Version),
		Now: rc.Now, ActorID: rc.Actor.ID, Pk: cur.PK, BaseContentHash: cur.ContentHash,
		BaseVersion: int32(cur.Version), BaseSchemaVersion: int32(cur.StoredSchemaVersion),
		BaseVisibility: cur.Visibility, BaseParticipants: nonNil(cur.Participants), BaseXmin: cur.xmin,
		RequestID: rc.RequestID, Operation: operation, Ref: pinned, ActorKind: rc.Actor.Kind, Permissions: m.permissions,
		SessionID: m.session, ParentSessionID: m.parentSession, DelegationChain: m.chain, TaskID: m.task, Delegation: m.delegation,
		IdemKey: key, RequestHash: reqHash, Result: stored, ExpiresAt: expires,
		EventType: orDefault(p.event, cur.Type+".updated"), Source: Source, Payload: pgjson.JSON(pb), Audience: nonNil(audience), Channel: event.Channel,
	})
	moved := isAssert(err, "scidex: base changed")
	if err != nil && !moved {
		return nil, fmt.Errorf("write %s: %w", cur.Unpinned(), err)
	}
	if err == nil && !written.Claimed {
		return nil, errKeyHeld
	}
	if moved || written.Version == 0 {
		// Someone wrote between our read and our write: their change stands, and
		// this writer gets the conflict computed against it.
		fresh, ferr := w.q.ArtifactGetByTypeID(ctx, cur.Type, cur.ID)
		if ferr != nil {
			return nil, fmt.Errorf("reload %s: %w", cur.Unpinned(), ferr)
		}
		now := fromRow(fresh)
		if retry && (remembered || now.ContentHash == cur.ContentHash) {
			return nil, &rowMoved{fresh: now}
		}
		if err := checkMutable(t, now, stateOnly); err != nil {
			return nil, err
		}
		return nil, s.conflict(ctx, w, t, now, p)
	}
	if hook != nil {
		if err := hook.apply(ctx, s, w); err != nil {
			return nil, err
		}
	}
	a := *cur
	a.Version, a.Title, a.Content, a.ContentHash, a.LifecycleState = int(written.Version), next.Title, content, hash, next.LifecycleState
	a.SchemaVersion, a.UpdatedAt, a.UpdatedBy = t.Version, rc.Now, rc.Actor.ID
	a.xmin = written.Xmin
	w.rememberRow(&a)
	// A new version stamps its produced_by when it changed: the same one
	// again would stamp nothing new.
	if pb := schema.ProducedByOf(content); !sameProducedBy(pb, schema.ProducedByOf(cur.Content)) {
		s.stampAfterCommit(ctx, w, &a, pb)
	}
	return &WriteResult{Ref: pinned, ContentHash: hash, RequestID: rc.RequestID, Warnings: warnings, Artifact: &a}, nil
}

// checkMutable refuses updates the type's mutability forbids. Types that can
// only be superseded may still move through their lifecycle (draft -> final).
func checkMutable(t *schema.Type, cur *Artifact, stateOnly bool) error {
	var hint string
	switch {
	case !cur.IsLatest && cur.SupersededBy != nil:
		hint = "it has been superseded by " + *cur.SupersededBy + "; update that instead"
	case !cur.IsLatest:
		hint = "it has been retired"
	case t.Doc.Mutability == schema.Immutable:
		hint = "it is immutable: create a new artifact instead"
	case t.Doc.Mutability == schema.AppendOnly:
		hint = "it is append-only: add a new artifact (a comment, a link, a signal) instead"
	case t.Doc.Mutability == schema.SupersededOnly && !stateOnly:
		hint = "it can only be superseded: create its replacement and call supersedeArtifact (only its lifecycleState may change)"
	}
	if hint == "" {
		return nil
	}
	p := problem.New(problem.MutabilityViolation, "%s cannot be updated: %s", cur.Unpinned(), hint)
	p.Refs = []string{cur.Unpinned().String()}
	p.Extra = string(t.Doc.Mutability)
	return p
}

type fields struct {
	Title          string
	Content        json.RawMessage
	LifecycleState *string
}

// nextFields applies the update's content, patch, title and state to cur.
func nextFields(cur *Artifact, p UpdateParams) (fields, error) {
	next := fields{Title: cur.Title, Content: cur.Content, LifecycleState: cur.LifecycleState}
	if p.Title != nil {
		next.Title = *p.Title
	}
	if p.LifecycleState != nil {
		next.LifecycleState = p.LifecycleState
	}
	switch {
	case p.Content != nil:
		next.Content = p.Content
	case p.Patch != nil:
		out, err := applyPatch(cur.Content, p.Patch)
		if err != nil {
			return next, err
		}
		next.Content = out
	}
	return next, nil
}

// checkState checks that a requested lifecycle state is one the type declares;
// whether the move is allowed is for the lifecycle validators.
func checkState(t *schema.Type, cur *Artifact, to *string) *problem.Detail {
	if to == nil || (cur != nil && cur.LifecycleState != nil && *cur.LifecycleState == *to) {
		return nil
	}
	lc := t.Doc.Lifecycle
	if len(lc.States) == 0 {
		d := problem.Field("lifecycleState", "lifecycle", t.Name()+" artifacts have no lifecycle", *to)
		return &d
	}
	if !lc.HasState(*to) {
		d := problem.Field("lifecycleState", "enum", "must be one of "+strings.Join(lc.States, ", "), *to)
		return &d
	}
	return nil
}

// LifecycleInfo is the body of a LIFECYCLE_VIOLATION.
type LifecycleInfo struct {
	From, To string
	// Allowed lists the states the actor may move the artifact to from From.
	Allowed []string
}

func declared(t *schema.Type, from, to string) bool {
	for _, tr := range t.Doc.Lifecycle.Transitions {
		if (tr.From == from || tr.From == "*") && tr.To == to {
			return true
		}
	}
	return false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
