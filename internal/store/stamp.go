package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
)

// Provenance stamps. Most agents run tools in their own runtime and submit
// the result with createArtifact, its content saying where it came from
// (content.produced_by {actor, skill, tool}); the tool dispatcher knows the
// same of a finished call's result artifact. Either way the server records
// it as edges in provenance_edges — produced_by_actor → actor:<id>,
// produced_by_skill → skill:<name>, produced_by_tool → tool:<name> — which
// Artifact.provenance and Actor.produced read back.
//
// Stamping is best effort and never fails the write it follows: it runs
// after the write has committed (the writer's afterCommit hook), as a
// statement of its own. Not in the write's transaction: a plain create is a
// single statement without one (writeStatement), and stamping inside would
// cost it a transaction and a savepoint, three round trips, on the fast path
// — for a record whose failure must not undo the write anyway. The price is
// that a server dying between the commit and the stamp loses the stamp; the
// content still says produced_by, so it can be stamped again. Every refusal
// (a tool or skill not registered, an actor the submitter does not act for)
// and every failure is logged with the artifact's ref.
//
// Stamping is idempotent: (source, predicate, target) is unique, so a
// replayed submission or the same produced_by again stamps nothing new.
//
// A stamp that wrote an edge emits artifact.provenance_stamped on the
// artifact's ref, the new edges in its payload, to the artifact's own
// audience (everyone for a public artifact, its participants for a
// participants-only one): a client waiting for a result's provenance is told
// when it is there, instead of polling for it.

// The provenance predicates.
const (
	PredProducedByActor = "produced_by_actor"
	PredProducedBySkill = "produced_by_skill"
	PredProducedByTool  = "produced_by_tool"
)

// EventProvenanceStamped is the event of a stamp that wrote edges.
const EventProvenanceStamped = "artifact.provenance_stamped"

// The prefixes of stamp targets: actor:<id>, skill:<name>, tool:<name>.
const (
	TargetActor = "actor:"
	TargetSkill = "skill:"
	TargetTool  = "tool:"
)

// stampTimeout bounds a stamp, which runs after the response's write and
// detached from the request's cancellation.
const stampTimeout = 5 * time.Second

// StampProvenance stamps what produced an artifact outside a write of it: the
// tool dispatcher on a finished call's result artifact. pb.Actor defaults to
// the request's actor, who must have written the artifact (created it or
// written its current version): a tool's output naming someone else's
// artifact cannot attribute it to the caller. Best effort: nothing is
// returned, every refusal and failure is logged, and with stamping off
// (Opts.NoProvenanceStamps) it does nothing.
func (s *Store) StampProvenance(ctx context.Context, r string, pb schema.ProducedBy) {
	rc := request.From(ctx)
	if s.noStamps || rc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stampTimeout)
	defer cancel()
	parsed, err := ref.Parse(r)
	if err != nil {
		s.log.Warn("provenance stamp refused", "ref", r, "reason", err.Error())
		return
	}
	src, err := dbsqlc.New(s.pool).ProvenanceSourceOf(ctx, parsed.Type, parsed.ID, rc.Actor.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		s.log.Warn("provenance stamp refused", "ref", r, "actor", rc.Actor.ID,
			"reason", "no such artifact written by the request's actor")
		return
	}
	if err != nil {
		s.log.Error("provenance stamp failed", "ref", r, "err", err)
		return
	}
	s.stamp(ctx, rc, src.Pk, int(src.Version), parsed.Unpinned().String(), pb)
}

// stampAfterCommit stamps a written artifact's content.produced_by once the
// write has committed (see above for why not in its transaction).
func (s *Store) stampAfterCommit(ctx context.Context, w *writer, a *Artifact, pb *schema.ProducedBy) {
	if s.noStamps || pb == nil {
		return
	}
	ctx, rc, p := context.WithoutCancel(ctx), w.rc, *pb
	pk, version, r := a.PK, a.Version, a.Unpinned().String()
	w.afterCommit(func() {
		ctx, cancel := context.WithTimeout(ctx, stampTimeout)
		defer cancel()
		s.stamp(ctx, rc, pk, version, r, p)
	})
}

// stamp writes the edges of one submission on the artifact pk, in one
// statement through the pool (a transaction the write ran in has ended).
func (s *Store) stamp(ctx context.Context, rc *request.Context, pk int64, version int, r string, pb schema.ProducedBy) {
	var preds, targets []string
	actor := pb.Actor
	if actor == "" {
		actor = rc.Actor.ID
	}
	if actor == rc.Actor.ID || slices.Contains(rc.DelegationChain.ActorIDs(), actor) {
		preds, targets = append(preds, PredProducedByActor), append(targets, TargetActor+actor)
	} else {
		s.log.Warn("provenance stamp refused", "ref", r, "predicate", PredProducedByActor, "target", TargetActor+actor,
			"reason", fmt.Sprintf("the submitter %s neither is %s nor acts for it (its delegation chain)", rc.Actor.ID, actor))
	}
	if pb.Skill != "" {
		preds, targets = append(preds, PredProducedBySkill), append(targets, TargetSkill+pb.Skill)
	}
	if pb.Tool != "" {
		preds, targets = append(preds, PredProducedByTool), append(targets, TargetTool+pb.Tool)
	}
	if len(preds) == 0 {
		return
	}
	rows, err := dbsqlc.New(s.pool).ProvenanceStamp(ctx, dbsqlc.ProvenanceStampParams{
		Predicates: preds, Targets: targets, SourcePk: pk, Version: int32(version),
		RequestID: rc.RequestID, StampedBy: rc.Actor.ID, CreatedAt: rc.Now,
	})
	if err != nil {
		s.log.Error("provenance stamp failed", "ref", r, "err", err)
		return
	}
	var stamped []map[string]string
	for _, row := range rows {
		if row.Inserted {
			stamped = append(stamped, map[string]string{"predicate": row.Predicate, "target": row.Target})
		}
		if !row.Known {
			kind, name, _ := strings.Cut(row.Target, ":")
			s.log.Warn("provenance stamp refused", "ref", r, "predicate", row.Predicate, "target", row.Target,
				"reason", fmt.Sprintf("no %s named %q is registered", kind, name))
		}
	}
	if len(stamped) > 0 {
		s.stampedEvent(ctx, rc, r, version, stamped)
	}
}

// stampedEvent emits artifact.provenance_stamped for the edges a stamp of r
// (unpinned) at version wrote, to r's audience. Best effort, like the stamp:
// a failure is logged.
func (s *Store) stampedEvent(ctx context.Context, rc *request.Context, r string, version int, stamped []map[string]string) {
	parsed, err := ref.Parse(r)
	if err != nil {
		return
	}
	ctx = request.With(ctx, rc)
	_, _, err = write(ctx, s, writeOp{Operation: "stampProvenance", Unmetered: true}, func(ctx context.Context, w *writer) (struct{}, error) {
		row, err := w.q.ArtifactGetByTypeID(ctx, parsed.Type, parsed.ID)
		if err != nil {
			return struct{}{}, err
		}
		audience, err := w.audience(ctx, fromRow(row))
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, w.event(ctx, EventProvenanceStamped, r, map[string]any{
			"ref": r, "version": version, "stamps": stamped, "stampedBy": rc.Actor.ID}, audience)
	})
	if err != nil {
		s.log.Error("provenance stamp: its event failed", "ref", r, "err", err)
	}
}

// sameProducedBy reports whether two produced_by values stamp the same edges.
func sameProducedBy(a, b *schema.ProducedBy) bool {
	return a != nil && b != nil && *a == *b
}
