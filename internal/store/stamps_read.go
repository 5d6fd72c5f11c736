package store

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
)

// Stamp is one provenance edge on an artifact (see stamp.go).
type Stamp struct {
	PK        int64
	SourcePK  int64
	Predicate string
	// Target is actor:<id>, skill:<name> or tool:<name>.
	Target string
	// Version is the artifact's version when it was stamped.
	Version   int
	RequestID string
	// StampedBy is the actor of the request that stamped (the submitter).
	StampedBy string
	CreatedAt time.Time
}

// StampsFor returns the stamps on each of pks, oldest first, in one statement.
// An artifact without stamps is absent from the map.
func (s *Store) StampsFor(ctx context.Context, pks []int64) (map[int64][]Stamp, error) {
	rows, err := s.q.ProvenanceStampsFor(ctx, pks)
	if err != nil {
		return nil, fmt.Errorf("read provenance stamps: %w", err)
	}
	out := make(map[int64][]Stamp, len(pks))
	for _, r := range rows {
		out[r.SourcePk] = append(out[r.SourcePk], Stamp{PK: r.Pk, SourcePK: r.SourcePk, Predicate: r.Predicate, Target: r.Target,
			Version: int(r.Version), RequestID: r.RequestID, StampedBy: r.StampedBy, CreatedAt: r.CreatedAt})
	}
	return out, nil
}

// ProducedQuery asks for a page of what an actor produced.
type ProducedQuery struct {
	Actor string
	// Via keeps what came from one tool or skill: a name (either a tool or a
	// skill of that name) or a target, tool:<name> or skill:<name>.
	Via string
	// Limit is the page size; BeforePK the cursor (0: from the newest).
	Limit    int
	BeforePK int64
}

// Produced is one artifact an actor produced.
type Produced struct {
	// StampPK orders the list and is its cursor.
	StampPK  int64
	At       time.Time
	Artifact *Artifact
	// Tool and Skill are the names of the first tool and skill stamped on the
	// artifact, "" when none.
	Tool, Skill string
}

// ProducedBy returns what q.Actor produced (its produced_by_actor stamps),
// newest first, of the artifacts the request's actor may read.
func (s *Store) ProducedBy(ctx context.Context, q ProducedQuery) ([]Produced, error) {
	via, err := viaTargets(q.Via)
	if err != nil {
		return nil, err
	}
	before := q.BeforePK
	if before <= 0 {
		before = math.MaxInt64
	}
	viewer, admin := "", false
	if rc := request.From(ctx); rc != nil && !rc.Anonymous {
		viewer, admin = rc.Actor.ID, rc.Actor.Has(auth.PermAdmin)
	}
	rows, err := s.q.ProvenanceProduced(ctx, dbsqlc.ProvenanceProducedParams{ActorTarget: TargetActor + q.Actor,
		BeforePk: before, ViaTargets: via, Admin: admin, Viewer: viewer, Lim: int32(q.Limit)})
	if err != nil {
		return nil, fmt.Errorf("read what %s produced: %w", q.Actor, err)
	}
	out := make([]Produced, len(rows))
	for i, r := range rows {
		out[i] = Produced{StampPK: r.StampPk, At: r.ProducedAt, Artifact: fromRow(r.Artifact),
			Tool: strings.TrimPrefix(r.ToolTarget, TargetTool), Skill: strings.TrimPrefix(r.SkillTarget, TargetSkill)}
	}
	return out, nil
}

// viaTargets turns a via argument into the stamp targets it matches.
func viaTargets(via string) ([]string, error) {
	switch {
	case via == "":
		return []string{}, nil
	case strings.HasPrefix(via, TargetTool), strings.HasPrefix(via, TargetSkill):
		return []string{via}, nil
	case strings.Contains(via, ":"):
		return nil, problem.Invalid(problem.Field("via", "pattern",
			"via is a tool or skill name (pk.nca), or tool:<name> or skill:<name> to pick one of the two", via))
	}
	return []string{TargetTool + via, TargetSkill + via}, nil
}
