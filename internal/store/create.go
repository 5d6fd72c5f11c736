package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/pgjson"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
)

// MaxTitleLen bounds titles, in characters.
const MaxTitleLen = 500

// CreateParams is the input of createArtifact.
type CreateParams struct {
	Type           string          `json:"type"`
	ID             string          `json:"id,omitempty"`
	Title          string          `json:"title"`
	Content        json.RawMessage `json:"content"`
	LifecycleState *string         `json:"lifecycleState,omitempty"`
	IdempotencyKey string          `json:"-"`
	// audience lists the recipients the operation delivers a participants-only
	// artifact to (sendMessage's); its created event reaches them and the creator.
	audience []string
	// event names the created event when a server operation says so
	// (tool_call.started); see ServerOpts.
	event string
	// visibility and participants are a server operation's say over who reads
	// the artifact (ServerOpts.Visibility, ServerOpts.Participants).
	visibility   string
	participants []string
}

// WriteResult is what a single write returns. It is also what an idempotency key
// stores, so a replay answers exactly what the first request answered.
type WriteResult struct {
	Ref         string   `json:"ref"`
	ContentHash string   `json:"contentHash"`
	RequestID   string   `json:"requestId"`
	Warnings    []string `json:"warnings"`
	// Replay is true when the result was stored by an earlier request with the
	// same idempotency key and nothing was written now.
	Replay bool `json:"-"`
	// LinkPK names the link an addLink or cite made (0 for other writes).
	LinkPK int64 `json:"linkPk,omitempty"`
	// Artifact is the version written, loaded for the response.
	Artifact *Artifact `json:"-"`
	// Link is the link written, loaded for the response of addLink and cite.
	Link *Link `json:"-"`
}

// CreateArtifact validates and stores a new artifact.
func (s *Store) CreateArtifact(ctx context.Context, p CreateParams) (*WriteResult, error) {
	res, replay, err := write(ctx, s, writeOp{Operation: "createArtifact", IdempotencyKey: p.IdempotencyKey, Input: p, SingleStatement: p.Type != schema.MetaType},
		func(ctx context.Context, w *writer) (*WriteResult, error) {
			return s.create(ctx, w, p, "createArtifact")
		})
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

// finish loads the written version for the response.
func (s *Store) finish(ctx context.Context, res *WriteResult, replay bool) (*WriteResult, error) {
	res.Replay = replay
	if res.Artifact == nil {
		r, err := ref.Parse(res.Ref)
		if err != nil {
			return nil, fmt.Errorf("stored result has a bad ref %q: %w", res.Ref, err)
		}
		a, err := s.Get(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", res.Ref, err)
		}
		res.Artifact = a
	}
	if res.LinkPK != 0 && res.Link == nil {
		l, err := s.q.LinkGetByPK(ctx, res.LinkPK)
		if err != nil {
			return nil, fmt.Errorf("load link %d: %w", res.LinkPK, err)
		}
		res.Link = linkFromRow(l)
	}
	return res, nil
}

func (s *Store) create(ctx context.Context, w *writer, p CreateParams, operation string) (*WriteResult, error) {
	rc := w.rc
	t, err := s.typeOf(ctx, w.q, p.Type)
	if err != nil {
		return nil, err
	}
	if err := allowWrite(t, "create", t.Doc.Policy.Create, operation, rc, ""); err != nil {
		return nil, err
	}
	state, problems := s.checkCreate(t, rc, &p)
	warnings := []string{}
	if st, warn := reviewed(t, rc); st != nil {
		state, warnings = st, append(warnings, warn)
	}
	problems = append(problems, serverFieldsOnCreate(t, operation, p.Content)...)
	if len(problems) > 0 {
		return nil, problem.Invalid(problems...)
	}
	content, err := compactJSON(p.Content)
	if err != nil {
		return nil, err
	}
	hash, err := canon.Hash(canon.Fields{Title: p.Title, Content: content, LifecycleState: state})
	if err != nil {
		return nil, fmt.Errorf("content hash: %w", err)
	}
	var hook *schemaWrite
	if t.Name() == schema.MetaType {
		if hook, err = s.checkSchemaWrite(ctx, w, p.ID, content); err != nil {
			return nil, err
		}
	}
	id := p.ID
	if id == "" {
		id = uuid.Must(uuid.NewV7()).String()
		if t.Doc.IDStrategy == schema.IDStrategySlug {
			id = slugify(p.Title)
		}
	}
	if err := s.runValidators(ctx, w, t, &ValidationInput{Operation: OpCreate, ID: id, Title: p.Title, Content: content, State: state}); err != nil {
		return nil, err
	}

	if err := w.recordActor(ctx); err != nil {
		return nil, err
	}
	prov, _ := json.Marshal([]ProvenanceStep{newStep(rc, operation)})
	// The created event of a participants-only artifact reaches its participants
	// alone: the creator, the recipients the operation delivers it to, and the
	// participants the server names.
	visibility, participants := t.Doc.Policy.Read, []string{}
	if p.visibility != "" {
		visibility = p.visibility
	}
	audience := []string{}
	if visibility == schema.ReadParticipants {
		participants = dedupeSorted(p.participants)
		audience = dedupeSorted(append(append(p.audience, rc.Actor.ID), participants...))
	}
	var row dbsqlc.ArtifactCreateWriteRow
	for attempt := 0; ; attempt++ {
		pinned := ref.Ref{Type: t.Name(), ID: id, Hash: hash}.String()
		payload, _ := json.Marshal(map[string]any{"ref": pinned, "type": t.Name(), "id": id, "title": p.Title, "contentHash": hash, "version": 1})
		key, reqHash, stored, expires, err := w.claimParams(&WriteResult{Ref: pinned, ContentHash: hash, RequestID: rc.RequestID, Warnings: warnings})
		if err != nil {
			return nil, err
		}
		m := w.meta(operation, pinned)
		row, err = w.q.ArtifactCreateWrite(ctx, dbsqlc.ArtifactCreateWriteParams{
			Type: t.Name(), ID: id, Title: p.Title, Content: pgjson.JSON(content), ContentHash: hash, LifecycleState: state,
			SchemaVersion: int32(t.Version), Now: rc.Now, ActorID: rc.Actor.ID, Provenance: pgjson.JSON(prov),
			RequestID: rc.RequestID, Operation: operation, Ref: pinned, ActorKind: rc.Actor.Kind, Permissions: m.permissions,
			SessionID: m.session, ParentSessionID: m.parentSession, DelegationChain: m.chain, TaskID: m.task, Delegation: m.delegation,
			IdemKey: key, RequestHash: reqHash, Result: stored, ExpiresAt: expires,
			EventType: orDefault(p.event, t.Name()+".created"), Source: Source, Payload: pgjson.JSON(payload), Audience: audience, Channel: event.Channel,
			Visibility: visibility, Participants: participants,
		})
		taken := isAssert(err, "scidex: id taken")
		if err != nil && !taken {
			return nil, fmt.Errorf("write artifact: %w", err)
		}
		if err == nil && !row.Claimed {
			return nil, errKeyHeld
		}
		if err == nil && row.Pk != 0 {
			break
		}
		// The (type, id) pair is taken.
		if p.ID != "" || t.Doc.IDStrategy != schema.IDStrategySlug || attempt >= 5 {
			r := ref.Ref{Type: t.Name(), ID: id}
			return nil, problem.Invalid(problem.Field("id", "unique",
				fmt.Sprintf("%s already exists; update it, or choose another id", r), id))
		}
		id = slugify(p.Title) + "-" + uuid.Must(uuid.NewV7()).String()[24:]
	}
	if hook != nil {
		if err := hook.apply(ctx, s, w); err != nil {
			return nil, err
		}
	}
	pinned := ref.Ref{Type: t.Name(), ID: id, Hash: hash}.String()
	a := &Artifact{PK: row.Pk, Type: t.Name(), ID: id, Version: 1, Title: p.Title, Content: content, ContentHash: hash,
		LifecycleState: state, SchemaVersion: t.Version, CreatedAt: rc.Now, UpdatedAt: rc.Now, CreatedBy: rc.Actor.ID,
		UpdatedBy: rc.Actor.ID, IsLatest: true, Provenance: prov, Visibility: visibility, Participants: participants, Current: true,
		xmin: row.Xmin}
	w.rememberRow(a)
	s.stampAfterCommit(ctx, w, a, schema.ProducedByOf(content))
	return &WriteResult{Ref: pinned, ContentHash: hash, RequestID: rc.RequestID, Warnings: warnings, Artifact: a}, nil
}

// typeOf returns the schema of a type named in input, as a validation problem
// when there is none. It reads through q (a transaction's, inside a write).
func (s *Store) typeOf(ctx context.Context, q *dbsqlc.Queries, typ string) (*schema.Type, error) {
	if !ref.ValidType(typ) {
		return nil, problem.Invalid(problem.Field("type", "pattern", "a type name is lower-case letters, digits and '_', starting with a letter", typ))
	}
	t, err := s.registry.GetWith(ctx, q, typ)
	if errors.Is(err, schema.ErrUnknownType) {
		return nil, problem.Invalid(problem.Detail{Path: "type", Constraint: "known_type",
			Message: fmt.Sprintf("unknown artifact type %q", typ), Value: mustJSON(typ),
			Suggestion: "list the registered types with the `schemas` query, or register a new type by creating a `schema` artifact"})
	}
	return t, err
}

// checkCreate validates everything about a create that needs no database: id,
// title, content and the initial lifecycle state. It returns the state to store.
func (s *Store) checkCreate(t *schema.Type, rc *request.Context, p *CreateParams) (*string, []problem.Detail) {
	var out []problem.Detail
	if p.ID != "" {
		if d := t.CheckID(p.ID); d != nil {
			out = append(out, *d)
		}
	} else if t.Doc.IDStrategy == schema.IDStrategyClient {
		out = append(out, problem.Field("id", "required", fmt.Sprintf("%s artifacts need a client-chosen id", t.Name()), nil))
	}
	out = append(out, checkTitle(p.Title)...)
	if t.Doc.IDStrategy == schema.IDStrategySlug && p.ID == "" && slugify(p.Title) == "" && len(out) == 0 {
		out = append(out, problem.Field("title", "slug", "the id is derived from the title, which has no letters or digits; give an id", p.Title))
	}
	out = append(out, t.ValidateContent(p.Content)...)
	out = append(out, checkContentSize(p.Content)...)
	state, d := initialState(t, p.LifecycleState)
	if d != nil {
		out = append(out, *d)
	}
	return state, out
}

func checkTitle(title string) []problem.Detail {
	if strings.TrimSpace(title) == "" {
		return []problem.Detail{problem.Field("title", "minLength", "must not be empty", title)}
	}
	if !utf8.ValidString(title) {
		return []problem.Detail{problem.Field("title", "encoding", "must be valid UTF-8", nil)}
	}
	if n := utf8.RuneCountInString(title); n > MaxTitleLen {
		return []problem.Detail{problem.Field("title", "maxLength", fmt.Sprintf("must be at most %d characters, got %d", MaxTitleLen, n), nil)}
	}
	if strings.ContainsAny(title, "\x00\r\n") {
		return []problem.Detail{problem.Field("title", "pattern", "must be one line without control characters", title)}
	}
	return nil
}

// initialState picks the lifecycle state of a new artifact: the type's initial
// state, or a requested one the type declares (the lifecycle validators decide
// whether the creator may start it there).
func initialState(t *schema.Type, requested *string) (*string, *problem.Detail) {
	if requested == nil {
		return t.Doc.Lifecycle.Initial, nil
	}
	if d := checkState(t, nil, requested); d != nil {
		return nil, d
	}
	return requested, nil
}

// compactJSON re-encodes content without insignificant whitespace; the database
// keeps jsonb anyway, this keeps stored versions and hashes tidy.
func compactJSON(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := decodeJSON(raw, &v); err != nil {
		return nil, problem.Invalid(problem.Field("content", "json", "is not valid JSON: "+err.Error(), nil))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode content: %w", err)
	}
	return b, nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// slugify turns a title into an id: lower case, words joined by '-'.
func slugify(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 80 {
			break
		}
	}
	return strings.TrimRight(b.String(), "-")
}
