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

// An artifact whose type's policy reads "participants" (messages, tool calls)
// is visible only to its creator, the recipients it was delivered to, its
// participants (artifacts.participants: the owner of the tool a call ran, the
// participants of a private input it was derived from), and admins. The write
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
	return fmt.Sprintf("(%[1]s.visibility = 'public' OR %[1]s.created_by = %[2]s OR %[2]s = ANY (%[1]s.participants) OR EXISTS (SELECT 1 FROM message_deliveries md WHERE md.message_pk = %[1]s.pk AND md.recipient = %[2]s))", alias, arg)
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
		set := dedupeSorted(append(append(rs, a.CreatedBy), a.Participants...))
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

// PredDerivedFrom is the link by which an artifact names an input it was
// computed from. It is the one predicate that carries privacy: what is
// derived from a participants-only input is participants-only too.
const PredDerivedFrom = "derived_from"

// inheritPrivacy makes src, just linked derived_from tgt, as private as tgt:
// a public artifact derived from a participants-only one becomes
// participants-only, readable by tgt's readers (its creator, recipients and
// participants) besides its own creator, and the events this transaction
// wrote about it reach only them. So an analysis a tool computes from a
// private message (compare, in the transaction that writes both) is never
// public, whichever tool wrote it. An artifact that is participants-only
// already keeps its participants; events of earlier transactions stay as they
// were (a public artifact linked later was public until then).
func inheritPrivacy(ctx context.Context, w *writer, src, tgt *Artifact) error {
	if !tgt.participantsOnly() || src.participantsOnly() {
		return nil
	}
	rs, err := w.q.DeliveryRecipients(ctx, tgt.PK)
	if err != nil {
		return fmt.Errorf("readers of %s: %w", tgt.Unpinned(), err)
	}
	participants := []string{}
	for _, r := range dedupeSorted(append(append(rs, tgt.CreatedBy), tgt.Participants...)) {
		if r != src.CreatedBy {
			participants = append(participants, r)
		}
	}
	audience := dedupeSorted(append([]string{src.CreatedBy}, participants...))
	if err := w.q.ArtifactMakePrivate(ctx, audience, participants, src.PK); err != nil {
		return fmt.Errorf("make %s private: %w", src.Unpinned(), err)
	}
	src.Visibility, src.Participants = schema.ReadParticipants, participants
	return nil
}
