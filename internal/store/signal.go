package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/pgjson"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/schema"
)

// SignalParams is the input of addSignal.
type SignalParams struct {
	Ref       string          `json:"ref"`
	Kind      string          `json:"kind"`
	Dimension *string         `json:"dimension,omitempty"`
	Value     float64         `json:"value"`
	Weight    *float64        `json:"weight,omitempty"`
	Reason    *string         `json:"reason,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	// Opponent is the other artifact of a duel (a kind declaring "opponent":
	// true): of the same type, readable, not the signalled artifact itself.
	Opponent       *string `json:"opponent,omitempty"`
	IdempotencyKey string  `json:"-"`
}

// AddSignal records a vote, rank, funding or forecast on an artifact. Values are
// checked against the kind's declaration in the artifact's schema; what is stored
// never changes, aggregation happens on read.
func (s *Store) AddSignal(ctx context.Context, p SignalParams) (*WriteResult, error) {
	res, replay, err := write(ctx, s, writeOp{Operation: "addSignal", IdempotencyKey: p.IdempotencyKey, Input: p},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.signal(ctx, w, p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

// serverSignal is what a server operation's signal (ServerSignal) adds to a
// client's: the operation, and the audience of its event.
type serverSignal struct {
	op       string
	audience []string
}

func (s *Store) signal(ctx context.Context, w *writer, p SignalParams) (*WriteResult, error) {
	return s.signalAs(ctx, w, p, nil)
}

func (s *Store) signalAs(ctx context.Context, w *writer, p SignalParams, server *serverSignal) (*WriteResult, error) {
	r, err := ref.Parse(p.Ref)
	if err != nil {
		return nil, problem.Invalid(problem.Field("ref", "ref", err.Error(), p.Ref))
	}
	row, err := w.q.ArtifactGetByTypeID(ctx, r.Type, r.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, problem.NotFoundRef(r.Unpinned().String())
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", r, err)
	}
	a := fromRow(row)
	if err := s.readable(ctx, w, a); err != nil {
		return nil, err
	}
	t, err := s.registry.GetWith(ctx, w.q, a.Type)
	if err != nil {
		return nil, err
	}
	dim, weight, problems := checkSignal(t, p)
	if len(problems) > 0 {
		return nil, problem.Invalid(problems...)
	}
	rule := t.Doc.Signals[p.Kind]
	if rule.ServerOnly && server == nil {
		return nil, problem.New(problem.PermissionDenied,
			"%s signals on %s artifacts are written only by the server's own operations (signals.%s.server_only in the %s schema), not by addSignal: %s",
			p.Kind, t.Name(), p.Kind, t.Name(), orDefault(rule.Description, "see the type's schema"))
	}
	if err := allowSignal(t, p.Kind, rule, w.rc.Actor); err != nil {
		return nil, err
	}
	opponentPK, err := s.opponent(ctx, w, a, rule, p)
	if err != nil {
		return nil, err
	}
	var unit *string
	if rule.Unit != "" {
		unit = &rule.Unit
	}
	meta := p.Metadata
	if len(meta) == 0 {
		meta = json.RawMessage("{}")
	}
	if err := w.recordActor(ctx); err != nil {
		return nil, err
	}
	if _, err := w.q.SignalInsert(ctx, dbsqlc.SignalInsertParams{
		ArtifactPk: a.PK, Kind: p.Kind, Dimension: dim, Voter: w.rc.Actor.ID, VoterKind: w.rc.Actor.Kind,
		Value: p.Value, Weight: weight, Unit: unit, Reason: p.Reason, Metadata: pgjson.JSON(meta), CreatedAt: w.rc.Now,
		OpponentPk: opponentPK,
	}); err != nil {
		return nil, fmt.Errorf("insert signal: %w", err)
	}
	journalOp := "addSignal"
	if server != nil {
		journalOp = server.op
	}
	if _, err := w.journal(ctx, journalOp, a.Ref().String()); err != nil {
		return nil, err
	}
	payload := map[string]any{"ref": a.Unpinned().String(), "kind": p.Kind, "dimension": dim, "value": p.Value, "weight": weight, "voter": w.rc.Actor.ID}
	if opponentPK != nil {
		payload["opponent"] = *p.Opponent
	}
	audience, err := w.audience(ctx, a)
	if err != nil {
		return nil, err
	}
	if server != nil && len(server.audience) > 0 {
		audience = server.audience
	}
	if err := w.event(ctx, "signal.created", a.Unpinned().String(), payload, audience); err != nil {
		return nil, err
	}
	return &WriteResult{Ref: a.Ref().String(), ContentHash: a.ContentHash, RequestID: w.rc.RequestID, Warnings: []string{}}, nil
}

// allowSignal applies a kind's signal policy (signals.<kind>.roles): only
// holders of one of its permissions give it, whoever else may write the type.
func allowSignal(t *schema.Type, kind string, rule schema.SignalRule, actor auth.Actor) error {
	if len(rule.Roles) == 0 {
		return nil
	}
	for _, role := range rule.Roles {
		if actor.Has(auth.Permission(role)) {
			return nil
		}
	}
	return problem.New(problem.PermissionDenied, "%s signals on %s artifacts are given only by %s (signals.%s.roles in the %s schema)",
		kind, t.Name(), strings.Join(rule.Roles, " or "), kind, t.Name())
}

// opponent checks a duel's opponent and returns its pk (nil for a kind that is
// not a duel, which takes none): an artifact of a's type, other than a, that
// the actor may read.
func (s *Store) opponent(ctx context.Context, w *writer, a *Artifact, rule schema.SignalRule, p SignalParams) (*int64, error) {
	if !rule.Opponent {
		if p.Opponent != nil {
			return nil, problem.Invalid(problem.Field("opponent", "absent",
				fmt.Sprintf("%s signals on %s are not duels and take no opponent", p.Kind, a.Type), *p.Opponent))
		}
		return nil, nil
	}
	if p.Opponent == nil {
		return nil, problem.Invalid(problem.Field("opponent", "required",
			fmt.Sprintf("a %s signal is a duel: name the %s it was against (value 1: %s won, 0.5: a draw, 0: it lost)", p.Kind, a.Type, a.Unpinned()), nil))
	}
	r, err := ref.Parse(*p.Opponent)
	if err != nil {
		return nil, problem.Invalid(problem.Field("opponent", "ref", err.Error(), *p.Opponent))
	}
	if r.Type != a.Type {
		return nil, problem.Invalid(problem.Field("opponent", "type",
			fmt.Sprintf("a %s duel is between two %s artifacts", p.Kind, a.Type), *p.Opponent))
	}
	if r.ID == a.ID {
		return nil, problem.Invalid(problem.Field("opponent", "distinct",
			"an artifact does not duel itself: name another "+a.Type, *p.Opponent))
	}
	row, err := w.q.ArtifactGetByTypeID(ctx, r.Type, r.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, problem.NotFoundRef(r.Unpinned().String())
	}
	if err != nil {
		return nil, fmt.Errorf("load opponent %s: %w", r, err)
	}
	o := fromRow(row)
	if err := s.readable(ctx, w, o); err != nil {
		return nil, err
	}
	return &o.PK, nil
}

// checkSignal checks a signal against its kind's declaration and returns the
// dimension (defaulted when the kind has one) and weight to store.
func checkSignal(t *schema.Type, p SignalParams) (string, float64, []problem.Detail) {
	rule, ok := t.Doc.Signals[p.Kind]
	if !ok {
		kinds := t.Doc.SignalKinds()
		msg := fmt.Sprintf("%s artifacts take no %q signals", t.Name(), p.Kind)
		if len(kinds) > 0 {
			msg += "; declared kinds: " + strings.Join(kinds, ", ")
		}
		return "", 0, []problem.Detail{problem.Field("kind", "declared", msg, p.Kind)}
	}
	var out []problem.Detail
	dim := ""
	switch {
	case p.Dimension != nil:
		dim = *p.Dimension
		if !contains(rule.Dimensions, dim) {
			out = append(out, problem.Field("dimension", "declared",
				fmt.Sprintf("%s signals on %s have the dimensions %s", p.Kind, t.Name(), strings.Join(rule.Dimensions, ", ")), dim))
		}
	case len(rule.Dimensions) == 1:
		dim = rule.Dimensions[0]
	case contains(rule.Dimensions, "default"):
		dim = "default"
	default:
		out = append(out, problem.Field("dimension", "required",
			fmt.Sprintf("%s signals on %s need a dimension: one of %s", p.Kind, t.Name(), strings.Join(rule.Dimensions, ", ")), nil))
	}
	if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
		out = append(out, problem.Field("value", "type", "must be a finite number", nil))
	} else {
		if len(rule.Values) > 0 && !containsFloat(rule.Values, p.Value) {
			out = append(out, problem.Field("value", "enum", fmt.Sprintf("a %s is one of %v", p.Kind, rule.Values), p.Value))
		}
		if len(rule.ValueRange) == 2 {
			if lo := rule.ValueRange[0]; lo != nil && p.Value < *lo {
				out = append(out, problem.Field("value", "minimum", fmt.Sprintf("a %s is at least %g", p.Kind, *lo), p.Value))
			}
			if hi := rule.ValueRange[1]; hi != nil && p.Value > *hi {
				out = append(out, problem.Field("value", "maximum", fmt.Sprintf("a %s is at most %g", p.Kind, *hi), p.Value))
			}
		}
	}
	weight := 1.0
	if p.Weight != nil {
		weight = *p.Weight
		if !(weight > 0) || math.IsInf(weight, 0) {
			out = append(out, problem.Field("weight", "exclusiveMinimum", "a weight is a positive number", weight))
		}
	}
	if p.Reason != nil && len(*p.Reason) > 2000 {
		out = append(out, problem.Field("reason", "maxLength", "a reason is at most 2000 characters", nil))
	}
	if len(p.Metadata) > 0 && !json.Valid(p.Metadata) {
		out = append(out, problem.Field("metadata", "json", "is not valid JSON", nil))
	}
	return dim, weight, out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsFloat(list []float64, v float64) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
