package resolvers

import (
	"context"
	"strings"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/store"
)

// StampOperation is the operation of the provenance step a submission's
// stamps make: the artifact was produced by an actor, via a skill or a tool.
const StampOperation = "produced_by"

// artifactProvenance is the artifact's own steps (who wrote it, in which
// request) followed by one produced_by step per submission that stamped it
// (store/stamp.go). A version shows the stamps made by then.
func (r *Resolver) artifactProvenance(ctx context.Context, b *model.Base) ([]*model.ProvenanceStep, error) {
	steps, err := b.Steps()
	if err != nil {
		return nil, err
	}
	stamps, err := r.loaders(ctx).Stamps(ctx, b.A.PK)
	if err != nil {
		return nil, err
	}
	return append(steps, stampSteps(stamps, b.A.Version)...), nil
}

// stampSteps groups stamps by the request that made them: one submission, one
// step. Its actor is the produced_by_actor target, or the submitter when the
// actor was not stamped.
func stampSteps(stamps []store.Stamp, version int) []*model.ProvenanceStep {
	var out []*model.ProvenanceStep
	byRequest := map[string]*model.ProvenanceStep{}
	for _, st := range stamps {
		if st.Version > version {
			continue
		}
		step := byRequest[st.RequestID]
		if step == nil {
			step = &model.ProvenanceStep{Operation: StampOperation, ActorID: st.StampedBy, RequestID: st.RequestID,
				DelegationChain: []string{}, Delegation: []*model.DelegationStep{}, At: st.CreatedAt}
			byRequest[st.RequestID] = step
			out = append(out, step)
		}
		step.Stamps = append(step.Stamps, &model.ProvenanceStamp{Predicate: st.Predicate, Target: st.Target,
			Revision: st.Version, CreatedAt: st.CreatedAt})
		switch st.Predicate {
		case store.PredProducedByActor:
			step.ActorID = strings.TrimPrefix(st.Target, store.TargetActor)
		case store.PredProducedBySkill:
			name := strings.TrimPrefix(st.Target, store.TargetSkill)
			step.Skill = &name
		case store.PredProducedByTool:
			name := strings.TrimPrefix(st.Target, store.TargetTool)
			step.Tool = &name
		}
	}
	return out
}

// stampActors are the actors the produced_by steps of stamps name.
func stampActors(stamps []store.Stamp) []string {
	var out []string
	for _, st := range stamps {
		out = append(out, st.StampedBy)
		if st.Predicate == store.PredProducedByActor {
			out = append(out, strings.TrimPrefix(st.Target, store.TargetActor))
		}
	}
	return out
}

// actorProduced answers Actor.produced: a page of what the actor produced,
// with the tool or skill each came from.
func (r *Resolver) actorProduced(ctx context.Context, a *model.Actor, via *string, first *int, after *string) (*model.ProducedConnection, error) {
	n, err := store.PageSize(first, "first")
	if err != nil {
		return nil, err
	}
	before, err := decodePK(after, "after")
	if err != nil {
		return nil, err
	}
	q := store.ProducedQuery{Actor: a.ID, Limit: n + 1, BeforePK: before}
	if via != nil {
		q.Via = *via
	}
	page, err := r.Store.ProducedBy(ctx, q)
	if err != nil {
		return nil, err
	}
	conn := &model.ProducedConnection{Edges: []*model.ProducedEdge{}, PageInfo: &model.PageInfo{}}
	if len(page) > n {
		conn.PageInfo.HasNextPage = true
		page = page[:n]
	}
	arts := make([]*store.Artifact, len(page))
	for i, p := range page {
		arts[i] = p.Artifact
	}
	if err := r.prefetch(ctx, arts, path(ctx, selection(ctx), "edges", "node")); err != nil {
		return nil, err
	}
	for _, p := range page {
		conn.Edges = append(conn.Edges, &model.ProducedEdge{Cursor: encodePK(p.StampPK), Node: model.NewArtifact(p.Artifact),
			Tool: nonEmptyPtr(p.Tool), Skill: nonEmptyPtr(p.Skill), ProducedAt: p.At})
	}
	setPageInfo(conn.PageInfo, len(conn.Edges), func(i int) string { return conn.Edges[i].Cursor }, after != nil)
	return conn, nil
}

func nonEmptyPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
