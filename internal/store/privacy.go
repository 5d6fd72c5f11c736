package store

import (
	"context"
	"fmt"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/filter"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
)

// An artifact whose type's policy reads "participants" (messages) is visible
// only to its creator, the recipients it was delivered to, and admins. The write
// path stamps that on the artifact row (artifacts.visibility) and every read
// path applies it, so to anyone else such an artifact does not exist.

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
	return fmt.Sprintf("(%[1]s.visibility = 'public' OR %[1]s.created_by = %[2]s OR EXISTS (SELECT 1 FROM message_deliveries md WHERE md.message_pk = %[1]s.pk AND md.recipient = %[2]s))", alias, arg)
}

// participantsOnly reports whether a is readable by its participants only.
func (a *Artifact) participantsOnly() bool { return a.Visibility == schema.ReadParticipants }

// canRead reports whether the request's actor may read a, reading through q.
func (s *Store) canRead(ctx context.Context, q *dbsqlc.Queries, a *Artifact) (bool, error) {
	if !a.participantsOnly() {
		return true, nil
	}
	hidden, err := s.hiddenWith(ctx, q, []*Artifact{a})
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

// hidden returns the pks of the artifacts among arts the request's actor may
// not read; a statement only when some are participants-only.
func (s *Store) hidden(ctx context.Context, arts []*Artifact) (map[int64]bool, error) {
	return s.hiddenWith(ctx, s.q, arts)
}

func (s *Store) hiddenWith(ctx context.Context, q *dbsqlc.Queries, arts []*Artifact) (map[int64]bool, error) {
	var pks []int64
	for _, a := range arts {
		if a != nil && a.participantsOnly() {
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
	visible, err := q.ArtifactsVisibleToParticipant(ctx, pks, actor)
	if err != nil {
		return nil, fmt.Errorf("participant visibility: %w", err)
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

// audience is who the events about arts may reach: everyone (nil, a public
// event) when they are all public; otherwise only the actors who may read every
// participants-only one among them (a link between two private artifacts is
// news only to those who see both ends). An empty intersection still makes a
// private event: its audience is the system actor alone, so admins only.
func (w *writer) audience(ctx context.Context, arts ...*Artifact) ([]string, error) {
	var out []string
	private := false
	for _, a := range arts {
		if a == nil || !a.participantsOnly() {
			continue
		}
		rs, err := w.q.DeliveryRecipients(ctx, a.PK)
		if err != nil {
			return nil, fmt.Errorf("audience of %s: %w", a.Unpinned(), err)
		}
		set := dedupeSorted(append(rs, a.CreatedBy))
		if !private {
			out, private = set, true
			continue
		}
		out = intersectSorted(out, set)
	}
	if private && len(out) == 0 {
		out = []string{auth.SystemID}
	}
	return out, nil
}

func intersectSorted(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}
