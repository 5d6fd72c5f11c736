package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/alias"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/problem"
)

// The handle registry's writes: claimHandle and renameHandle write alias
// artifacts (internal/alias holds the rules and says why), each in one
// transaction under the registry's lock, so two claims of look-alike handles
// cannot both pass the check. docs/aliases.md states the rules for users.

// ClaimHandleParams is the input of claimHandle.
type ClaimHandleParams struct {
	Name string `json:"name"`
	// Role makes the handle a role alias naming the members of role:<Role>
	// (admins only); nil claims the handle for the caller.
	Role           *string `json:"role,omitempty"`
	IdempotencyKey string  `json:"-"`
}

// RenameHandleParams is the input of renameHandle.
type RenameHandleParams struct {
	From           string `json:"from"`
	To             string `json:"to"`
	IdempotencyKey string `json:"-"`
}

// Handle is what a handle resolves to.
type Handle struct {
	// Name is the handle asked for, normalised.
	Name string
	// Registered is false for a handle that has no entry and names an actor by
	// its id (every actor's id is its handle until it claims one).
	Registered bool
	Kind       string
	State      string
	Actor      string // a persona handle's actor
	Role       string // a role alias's role
	// Current is the handle as it is now, renames followed: Name itself for an
	// active entry.
	Current   string
	RenamedAt *time.Time
	ClaimedAt time.Time
	// Entry is the alias artifact (nil when not Registered).
	Entry *Artifact
}

// ClaimHandle registers a handle for the caller, or (an admin's, with Role) a
// role alias.
func (s *Store) ClaimHandle(ctx context.Context, p ClaimHandleParams) (*WriteResult, error) {
	res, replay, err := write(ctx, s, writeOp{Operation: "claimHandle", IdempotencyKey: p.IdempotencyKey, Input: p},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.claimHandle(ctx, w, p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

// RenameHandle moves a handle's holder to a new handle and leaves the old one
// as a tombstone that still resolves to them.
func (s *Store) RenameHandle(ctx context.Context, p RenameHandleParams) (*WriteResult, error) {
	res, replay, err := write(ctx, s, writeOp{Operation: "renameHandle", IdempotencyKey: p.IdempotencyKey, Input: p},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.renameHandle(ctx, w, p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

// ResolveHandle says what @name names: nil when nothing (no entry, and no
// actor with that id). A malformed name is a ValidationFailed on field.
func (s *Store) ResolveHandle(ctx context.Context, name, field string) (*Handle, error) {
	return resolveHandle(ctx, s.q, name, field)
}

type aliasEntry struct {
	row     dbsqlc.Artifact
	content alias.Content
}

func getAlias(ctx context.Context, q *dbsqlc.Queries, name string) (*aliasEntry, error) {
	row, err := q.ArtifactGetByTypeID(ctx, alias.Type, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load alias:%s: %w", name, err)
	}
	e := &aliasEntry{row: row}
	if err := json.Unmarshal(row.Content, &e.content); err != nil {
		return nil, fmt.Errorf("alias:%s: %w", name, err)
	}
	return e, nil
}

func resolveHandle(ctx context.Context, q *dbsqlc.Queries, raw, field string) (*Handle, error) {
	name, err := alias.Normalize(raw)
	if err != nil {
		return nil, problem.Invalid(problem.Field(field, "handle", err.Error(), raw))
	}
	e, err := getAlias(ctx, q, name)
	if err != nil {
		return nil, err
	}
	if e == nil {
		// No entry: an actor's id is its handle (the address @<id> predates the registry).
		for _, cand := range []string{strings.TrimPrefix(raw, "@"), name} {
			ok, err := q.ActorExists(ctx, cand)
			if err != nil {
				return nil, fmt.Errorf("resolve @%s: %w", name, err)
			}
			if ok {
				return &Handle{Name: name, Kind: alias.KindPersona, State: alias.StateActive, Actor: cand, Current: name}, nil
			}
		}
		return nil, nil
	}
	h := &Handle{Name: name, Registered: true, Kind: e.content.Kind, State: e.content.State, Actor: e.content.Actor,
		Role: e.content.Role, Current: name, RenamedAt: e.content.RenamedAt, ClaimedAt: e.content.ClaimedAt, Entry: fromRow(e.row)}
	// Follow the renames to the handle as it is now; the actor is the entry's own.
	seen := map[string]bool{name: true}
	for cur := e; cur.content.State == alias.StateTombstone && cur.content.RenamedTo != "" && len(seen) <= alias.MaxHops; {
		next, err := getAlias(ctx, q, cur.content.RenamedTo)
		if err != nil {
			return nil, err
		}
		if next == nil || seen[cur.content.RenamedTo] {
			break
		}
		h.Current, cur = cur.content.RenamedTo, next
		seen[h.Current] = true
	}
	return h, nil
}

// refuseHandle says why name cannot be registered for holder (an actor id, or
// "role:<role>"), or nil. except is an entry the check ignores: the one a
// rename leaves.
func refuseHandle(ctx context.Context, w *writer, field, raw, name, holder, except string) error {
	rc := w.rc
	admin := rc.Actor.Has(auth.PermAdmin)
	if word := alias.ReservedWord(name); word != "" && !admin {
		return problem.New(problem.PermissionDenied, "%s: @%s is reserved (it is or holds %q, which would pass for the server, its operators or everyone); only admins claim it", field, name, word)
	}
	same, err := w.q.AliasBySkeleton(ctx, alias.Skeleton(name))
	if err != nil {
		return fmt.Errorf("look-alikes of @%s: %w", name, err)
	}
	for _, o := range same {
		if o.ID == except || o.ID == name {
			continue
		}
		return problem.Invalid(problem.Field(field, "confusable",
			fmt.Sprintf("@%s looks like @%s, which is registered (look-alike characters such as 0/o, 1/l/i, rn/m and '-'/'_' are folded); choose a handle that does not", name, o.ID), raw))
	}
	if holder != name {
		taken, err := w.q.ActorExists(ctx, name)
		if err != nil {
			return fmt.Errorf("actor %s: %w", name, err)
		}
		if taken {
			return problem.Invalid(problem.Field(field, "unique",
				fmt.Sprintf("@%s is the id of another actor, and messages to @%s reach them; choose another handle", name, name), raw))
		}
	}
	return nil
}

func (s *Store) claimHandle(ctx context.Context, w *writer, p ClaimHandleParams) (*WriteResult, error) {
	rc := w.rc
	name, err := alias.Normalize(p.Name)
	if err != nil {
		return nil, problem.Invalid(problem.Field("name", "handle", err.Error(), p.Name))
	}
	c := alias.Content{Kind: alias.KindPersona, Actor: rc.Actor.ID, State: alias.StateActive, Skeleton: alias.Skeleton(name), ClaimedAt: rc.Now}
	holder := rc.Actor.ID
	if p.Role != nil {
		if !rc.Actor.Has(auth.PermAdmin) {
			return nil, problem.New(problem.PermissionDenied, "role: a role alias delivers to every member of a role; only admins claim one")
		}
		if _, err := w.q.ArtifactGetByTypeID(ctx, "role", *p.Role); errors.Is(err, pgx.ErrNoRows) {
			return nil, problem.Invalid(problem.Field("role", "exists", fmt.Sprintf("no role artifact role:%s lists the members @%s would reach", *p.Role, name), *p.Role))
		} else if err != nil {
			return nil, fmt.Errorf("load role:%s: %w", *p.Role, err)
		}
		c = alias.Content{Kind: alias.KindRole, Role: *p.Role, State: alias.StateActive, Skeleton: c.Skeleton, ClaimedAt: rc.Now}
		holder = "role:" + *p.Role
	}
	if err := w.q.AliasLock(ctx); err != nil {
		return nil, fmt.Errorf("lock the handle registry: %w", err)
	}
	e, err := getAlias(ctx, w.q, name)
	if err != nil {
		return nil, err
	}
	if e != nil {
		mine := (c.Kind == alias.KindPersona && e.content.Actor == rc.Actor.ID) || (c.Kind == alias.KindRole && e.content.Role == c.Role)
		switch {
		case mine && e.content.State == alias.StateActive:
			a := fromRow(e.row)
			return &WriteResult{Ref: a.Ref().String(), ContentHash: a.ContentHash, RequestID: rc.RequestID, Warnings: []string{"@" + name + " is already yours"}, Artifact: a}, nil
		case mine:
			return nil, problem.Invalid(problem.Field("name", "tombstone",
				fmt.Sprintf("@%s is your renamed handle (a tombstone); take it back with renameHandle(from: <your handle>, to: \"@%s\")", name, name), p.Name))
		case e.content.State == alias.StateTombstone:
			return nil, problem.Invalid(problem.Field("name", "tombstone",
				fmt.Sprintf("@%s was renamed and stays a tombstone: old messages and links addressed to it still reach its holder, so nobody else may claim it", name), p.Name))
		default:
			return nil, problem.Invalid(problem.Field("name", "unique", fmt.Sprintf("@%s is taken; choose another handle", name), p.Name))
		}
	}
	if err := refuseHandle(ctx, w, "name", p.Name, name, holder, ""); err != nil {
		return nil, err
	}
	if c.Kind == alias.KindPersona {
		held, err := w.q.AliasActiveOfActor(ctx, rc.Actor.ID)
		if err != nil {
			return nil, fmt.Errorf("handles of %s: %w", rc.Actor.ID, err)
		}
		if len(held) > 0 {
			return nil, problem.Invalid(problem.Field("name", "one_handle",
				fmt.Sprintf("you hold @%s; an actor has one handle: rename it with renameHandle(from: \"@%s\", to: \"@%s\")", held[0], held[0], name), p.Name))
		}
	}
	raw, _ := json.Marshal(c)
	res, err := s.create(ctx, w, CreateParams{Type: alias.Type, ID: name, Title: "@" + name, Content: raw}, "claimHandle")
	if err != nil {
		return nil, err
	}
	if c.Kind == alias.KindPersona {
		if err := w.q.ActorSetHandle(ctx, name, rc.Actor.ID); err != nil {
			return nil, fmt.Errorf("record @%s: %w", name, err)
		}
	}
	return res, nil
}

func (s *Store) renameHandle(ctx context.Context, w *writer, p RenameHandleParams) (*WriteResult, error) {
	rc := w.rc
	from, err := alias.Normalize(p.From)
	if err != nil {
		return nil, problem.Invalid(problem.Field("from", "handle", err.Error(), p.From))
	}
	to, err := alias.Normalize(p.To)
	if err != nil {
		return nil, problem.Invalid(problem.Field("to", "handle", err.Error(), p.To))
	}
	if from == to {
		return nil, problem.Invalid(problem.Field("to", "different", "renaming needs a handle other than from", p.To))
	}
	if err := w.q.AliasLock(ctx); err != nil {
		return nil, fmt.Errorf("lock the handle registry: %w", err)
	}
	old, err := getAlias(ctx, w.q, from)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return nil, problem.New(problem.NotFound, "from: @%s is not a registered handle; claim one with claimHandle(name: \"@%s\")", from, from)
	}
	admin := rc.Actor.Has(auth.PermAdmin)
	switch {
	case old.content.Kind == alias.KindRole && !admin:
		return nil, problem.New(problem.PermissionDenied, "from: @%s is a role alias; only admins rename one", from)
	case old.content.Kind == alias.KindPersona && old.content.Actor != rc.Actor.ID && !admin:
		return nil, problem.New(problem.PermissionDenied, "from: @%s is another actor's handle; you rename only your own", from)
	case old.content.State == alias.StateTombstone:
		return nil, problem.Invalid(problem.Field("from", "tombstone",
			fmt.Sprintf("@%s was already renamed (to @%s); rename the handle it became", from, old.content.RenamedTo), p.From))
	}
	holder := old.content.Actor
	if old.content.Kind == alias.KindRole {
		holder = "role:" + old.content.Role
	}
	next, err := getAlias(ctx, w.q, to)
	if err != nil {
		return nil, err
	}
	var res *WriteResult
	now := rc.Now
	switch {
	case next == nil:
		if err := refuseHandle(ctx, w, "to", p.To, to, holder, from); err != nil {
			return nil, err
		}
		c := old.content
		c.Skeleton, c.ClaimedAt = alias.Skeleton(to), now
		raw, _ := json.Marshal(c)
		if res, err = s.create(ctx, w, CreateParams{Type: alias.Type, ID: to, Title: "@" + to, Content: raw}, "renameHandle"); err != nil {
			return nil, err
		}
	case next.content.State == alias.StateTombstone && next.content.Kind == old.content.Kind &&
		next.content.Actor == old.content.Actor && next.content.Role == old.content.Role:
		// The holder's own tombstone: taking it back.
		c := next.content
		c.State, c.RenamedTo, c.RenamedAt = alias.StateActive, "", nil
		raw, _ := json.Marshal(c)
		if res, err = s.update(ctx, w, UpdateParams{Ref: alias.Type + ":" + to, BaseContentHash: next.row.ContentHash, Content: raw, operation: "renameHandle"}); err != nil {
			return nil, err
		}
	case next.content.State == alias.StateTombstone:
		return nil, problem.Invalid(problem.Field("to", "tombstone",
			fmt.Sprintf("@%s was another holder's handle and stays a tombstone: old messages and links addressed to it still reach them, so nobody else may take it", to), p.To))
	default:
		return nil, problem.Invalid(problem.Field("to", "unique", fmt.Sprintf("@%s is taken; choose another handle", to), p.To))
	}
	c := old.content
	c.State, c.RenamedTo, c.RenamedAt = alias.StateTombstone, to, &now
	raw, _ := json.Marshal(c)
	if _, err := s.update(ctx, w, UpdateParams{Ref: alias.Type + ":" + from, BaseContentHash: old.row.ContentHash, Content: raw, operation: "renameHandle"}); err != nil {
		return nil, err
	}
	if c.Kind == alias.KindPersona {
		if err := w.q.ActorSetHandle(ctx, to, c.Actor); err != nil {
			return nil, fmt.Errorf("record @%s: %w", to, err)
		}
	}
	return res, nil
}

// handleRecipients are the actor ids @name delivers to (its actor, or its role's
// members).
func (s *Store) handleRecipients(ctx context.Context, w *writer, to string) ([]string, error) {
	h, err := resolveHandle(ctx, w.q, to, "recipient")
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, problem.Invalid(problem.Field("recipient", "recipient", "no actor has the handle "+to, to))
	}
	if h.Kind == alias.KindRole {
		return roleMembers(ctx, w.q, "role", h.Role, to)
	}
	return []string{h.Actor}, nil
}
