package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/views"
)

// leaderboard serves a page of a declared view (internal/views), loading what
// the query asks of its entries' artifacts or forecasters for the whole page
// at once, so a page's statements do not depend on its size.
func (r *Resolver) leaderboard(ctx context.Context, typ, view string, first *int, after *string, asOf *time.Time) (*model.Leaderboard, error) {
	p := views.Params{Type: typ, View: view, First: first, AsOf: asOf}
	if after != nil {
		p.After = *after
	}
	page, err := views.New(r.Store).Leaderboard(ctx, p)
	if err != nil {
		return nil, err
	}
	params, err := viewParameters(page.Declared)
	if err != nil {
		return nil, err
	}
	out := &model.Leaderboard{Type: typ, View: view, Kind: model.ViewKind(strings.ToUpper(page.View.Kind)), Description: page.View.Description,
		Parameters: params, AsOf: page.AsOf, Edges: make([]*model.LeaderboardEdge, len(page.Entries)),
		PageInfo: &model.PageInfo{HasNextPage: page.HasNext}}
	node := path(ctx, selection(ctx), "edges", "node")
	var arts map[int64]*store.Artifact
	if asks(ctx, node, "artifact") && page.View.Kind != "brier" {
		pks := make([]int64, len(page.Entries))
		for i, e := range page.Entries {
			pks[i] = e.ArtifactPK
		}
		if arts, err = r.Store.GetManyByPK(ctx, pks); err != nil {
			return nil, err
		}
		list := make([]*store.Artifact, 0, len(arts))
		for _, e := range page.Entries {
			if a := arts[e.ArtifactPK]; a != nil {
				list = append(list, a)
			}
		}
		if err := r.prefetch(ctx, list, path(ctx, node, "artifact")); err != nil {
			return nil, err
		}
	}
	if asks(ctx, node, "actor") && page.View.Kind == "brier" {
		w := newWanted()
		for _, e := range page.Entries {
			w.actors[e.ActorID] = true
		}
		if err := r.loaders(ctx).fill(ctx, w); err != nil {
			return nil, err
		}
	}
	for i, e := range page.Entries {
		n := &model.LeaderboardEntry{Rank: e.Rank, Score: e.Score, Count: e.Count, ArtifactPK: e.ArtifactPK, ActorID: e.ActorID, Art: arts[e.ArtifactPK]}
		if page.View.Kind == "elo" {
			n.Wins, n.Losses, n.Draws = ptr(e.Wins), ptr(e.Losses), ptr(e.Draws)
		}
		out.Edges[i] = &model.LeaderboardEdge{Cursor: e.Cursor, Node: n}
	}
	setPageInfo(out.PageInfo, len(out.Edges), func(i int) string { return out.Edges[i].Cursor }, after != nil)
	return out, nil
}

// viewParameters is a view's declaration as a client sees it: its parameters,
// without the kind and description the leaderboard reports on their own.
func viewParameters(d *views.Declared) (model.JSON, error) {
	b, err := json.Marshal(d.View)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "kind")
	delete(m, "description")
	if d.View.Kind == "elo" {
		m["initial_rating"] = d.View.Initial()
	}
	b, err = json.Marshal(m)
	return model.JSON(b), err
}

// viewArtifact reads the current version of the artifact a views query names;
// absent or unreadable is (nil, nil).
func (r *Resolver) viewArtifact(ctx context.Context, s string) (*store.Artifact, error) {
	rf, err := ref.Parse(s)
	if err != nil {
		return nil, problem.Invalid(problem.Field("ref", "ref", err.Error(), s))
	}
	a, err := r.Store.Get(ctx, rf.Unpinned())
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return a, err
}

func (r *Resolver) eloRating(ctx context.Context, s, view string) (*model.EloRating, error) {
	a, err := r.viewArtifact(ctx, s)
	if a == nil || err != nil {
		return nil, err
	}
	rt, err := views.New(r.Store).Elo(ctx, a, view)
	if err != nil {
		return nil, err
	}
	out := &model.EloRating{Ref: a.Unpinned().String(), View: view, Rating: rt.Rating, Games: rt.Games, Wins: rt.Wins,
		Losses: rt.Losses, Draws: rt.Draws, KFactor: rt.View.KFactor}
	if rt.Rank > 0 {
		out.Rank = ptr(rt.Rank)
	}
	return out, nil
}

func (r *Resolver) brierScoreHistory(ctx context.Context, s string, view *string) (*model.BrierTrace, error) {
	a, err := r.viewArtifact(ctx, s)
	if a == nil || err != nil {
		return nil, err
	}
	tr, err := views.New(r.Store).BrierTrace(ctx, a, deref(view))
	if err != nil {
		return nil, err
	}
	out := &model.BrierTrace{Ref: a.Unpinned().String(), View: tr.Name, State: tr.State, Outcome: tr.Outcome, BrierScore: tr.Brier,
		Points: make([]*model.BrierPoint, len(tr.Points))}
	w := newWanted()
	for i, p := range tr.Points {
		out.Points[i] = &model.BrierPoint{ForecasterID: p.Forecaster, Probability: p.Probability, At: p.At, BrierScore: p.Brier, RunningBrierScore: p.Running}
		w.actors[p.Forecaster] = true
	}
	if asks(ctx, path(ctx, selection(ctx), "points"), "forecaster") {
		if err := r.loaders(ctx).fill(ctx, w); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// leaderboardArtifact is an entry's artifact: loaded with its page, or by its
// loader (it may have gone since the page was ranked: then null).
func (r *Resolver) leaderboardArtifact(ctx context.Context, e *model.LeaderboardEntry) (model.Artifact, error) {
	if e.ArtifactPK == 0 {
		return nil, nil
	}
	a := e.Art
	if a == nil {
		var err error
		if a, err = r.loaders(ctx).Artifact(ctx, e.ArtifactPK); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil, nil
			}
			return nil, fmt.Errorf("leaderboard entry: %w", err)
		}
	}
	return model.NewArtifact(a), nil
}
