package store

import (
	"context"
	"fmt"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/filter"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
)

// Messages are private: only their sender, their recipients and admins read them.
// Every read path applies this, so another actor's mail does not exist for you.

// privateSQL is the condition a listing adds over the artifacts aliased alias.
func privateSQL(ctx context.Context, b *filter.Builder, alias string) string {
	rc := request.From(ctx)
	if rc != nil && rc.Actor.Has(auth.PermAdmin) {
		return "true"
	}
	actor := ""
	if rc != nil && !rc.Anonymous {
		actor = rc.Actor.ID
	}
	arg := b.Arg(actor)
	return fmt.Sprintf("(%[1]s.type <> 'message' OR %[1]s.created_by = %[2]s OR EXISTS (SELECT 1 FROM message_deliveries md WHERE md.message_pk = %[1]s.pk AND md.recipient = %[2]s))", alias, arg)
}

// canRead reports whether the request's actor may read a, reading through q.
func (s *Store) canRead(ctx context.Context, q *dbsqlc.Queries, a *Artifact) (bool, error) {
	if a.Type != "message" {
		return true, nil
	}
	hidden, err := s.hiddenMessagesWith(ctx, q, []*Artifact{a})
	return len(hidden) == 0, err
}

// readable refuses, as NOT_FOUND, a write that touches an artifact the actor may
// not read (another's message).
func (s *Store) readable(ctx context.Context, w *writer, a *Artifact) error {
	ok, err := s.canRead(ctx, w.q, a)
	if err != nil {
		return err
	}
	if !ok {
		return problem.NotFoundRef(a.Unpinned().String())
	}
	return nil
}

// hiddenMessages returns the pks of the messages among arts the request's actor
// may not read; a statement only when there are messages.
func (s *Store) hiddenMessages(ctx context.Context, arts []*Artifact) (map[int64]bool, error) {
	return s.hiddenMessagesWith(ctx, s.q, arts)
}

func (s *Store) hiddenMessagesWith(ctx context.Context, q *dbsqlc.Queries, arts []*Artifact) (map[int64]bool, error) {
	var pks []int64
	for _, a := range arts {
		if a != nil && a.Type == "message" {
			pks = append(pks, a.PK)
		}
	}
	if len(pks) == 0 {
		return nil, nil
	}
	rc := request.From(ctx)
	if rc != nil && rc.Actor.Has(auth.PermAdmin) {
		return nil, nil
	}
	actor := ""
	if rc != nil && !rc.Anonymous {
		actor = rc.Actor.ID
	}
	visible, err := q.MessagesVisible(ctx, pks, actor)
	if err != nil {
		return nil, fmt.Errorf("message visibility: %w", err)
	}
	ok := map[int64]bool{}
	for _, pk := range visible {
		ok[pk] = true
	}
	hidden := map[int64]bool{}
	for _, pk := range pks {
		if !ok[pk] {
			hidden[pk] = true
		}
	}
	return hidden, nil
}
