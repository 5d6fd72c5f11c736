package resolvers

import (
	"context"
	"encoding/base64"
	"strconv"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/store"
)

// The shared implementations of the Artifact interface's database-backed fields.
// Every typed subtype's resolver (artifact_types.resolvers.go) delegates here.

func (r *Resolver) artifactCreatedBy(ctx context.Context, b *model.Base) (*model.Actor, error) {
	return r.loaders(ctx).Actor(ctx, b.A.CreatedBy)
}

func (r *Resolver) artifactUpdatedBy(ctx context.Context, b *model.Base) (*model.Actor, error) {
	return r.loaders(ctx).Actor(ctx, b.A.UpdatedBy)
}

func (r *Resolver) artifactLinks(ctx context.Context, b *model.Base, direction *model.LinkDirection, predicates []string, first *int, after *string) (*model.LinkConnection, error) {
	n, err := store.PageSize(first, "first")
	if err != nil {
		return nil, err
	}
	afterPK, err := decodePK(after, "after")
	if err != nil {
		return nil, err
	}
	dir := store.DirOut
	if direction != nil {
		dir = string(*direction)
	}
	q := briefLinks(ctx, store.LinkQuery{Direction: dir, Predicates: predicates, Limit: n + 1, AfterPK: afterPK}, selection(ctx))
	links, err := r.loaders(ctx).Links(ctx, b.A.PK, q)
	if err != nil {
		return nil, err
	}
	conn := &model.LinkConnection{Edges: []*model.LinkEdge{}, PageInfo: &model.PageInfo{}}
	if len(links) > n {
		conn.PageInfo.HasNextPage = true
		links = links[:n]
	}
	// Whatever the query asks below these links, for all of them at once (a no-op
	// when a lookahead from further up already did it).
	if b.A.Current {
		r.loaders(ctx).primeArtifact(b.A) // the near end of every link (a brief one among the briefs)
	}
	if err := r.prefetchLinks(ctx, links, selection(ctx)); err != nil {
		return nil, err
	}
	for _, l := range links {
		conn.Edges = append(conn.Edges, &model.LinkEdge{Cursor: encodePK(l.PK), Node: linkModel(l)})
	}
	setPageInfo(conn.PageInfo, len(conn.Edges), func(i int) string { return conn.Edges[i].Cursor }, after != nil)
	return conn, nil
}

func linkModel(l store.Link) *model.Link {
	return &model.Link{PK: l.PK, FromPK: l.FromPK, ToPK: l.ToPK, Predicate: l.Predicate,
		Evidence: nonNil(l.Evidence), CreatedByID: l.CreatedBy, CreatedAt: l.CreatedAt}
}

func (r *Resolver) artifactHistory(ctx context.Context, b *model.Base, first *int, after *string) (*model.ArtifactConnection, error) {
	n, err := store.PageSize(first, "first")
	if err != nil {
		return nil, err
	}
	// History of any version starts at that version and goes back.
	before := int64(b.A.Version) + 1
	if after != nil {
		v, err := decodePK(after, "after")
		if err != nil {
			return nil, err
		}
		before = v
	}
	// History is about the artifact, so read from its current envelope.
	cur, err := r.loaders(ctx).Artifact(ctx, b.A.PK)
	if err != nil {
		return nil, err
	}
	versions, err := r.Store.History(ctx, cur, n+1, int(before))
	if err != nil {
		return nil, err
	}
	conn := &model.ArtifactConnection{Edges: []*model.ArtifactEdge{}, PageInfo: &model.PageInfo{}}
	if len(versions) > n {
		conn.PageInfo.HasNextPage = true
		versions = versions[:n]
	}
	if err := r.prefetch(ctx, versions, path(ctx, selection(ctx), "edges", "node")); err != nil {
		return nil, err
	}
	for _, v := range versions {
		conn.Edges = append(conn.Edges, &model.ArtifactEdge{Cursor: encodePK(int64(v.Version)), Node: model.NewArtifact(v)})
	}
	setPageInfo(conn.PageInfo, len(conn.Edges), func(i int) string { return conn.Edges[i].Cursor }, after != nil)
	total := cur.Version
	conn.CountFunc = func(context.Context) (int, error) { return total, nil }
	return conn, nil
}

// artifactComments lists the comment artifacts linked to b by comments_on, oldest first.
func (r *Resolver) artifactComments(ctx context.Context, b *model.Base, first *int, after *string) (*model.ArtifactConnection, error) {
	n, err := store.PageSize(first, "first")
	if err != nil {
		return nil, err
	}
	afterPK, err := decodePK(after, "after")
	if err != nil {
		return nil, err
	}
	ld := r.loaders(ctx)
	links, err := ld.Links(ctx, b.A.PK, store.LinkQuery{Direction: store.DirIn, Predicates: []string{"comments_on"}, Limit: n + 1, AfterPK: afterPK})
	if err != nil {
		return nil, err
	}
	conn := &model.ArtifactConnection{Edges: []*model.ArtifactEdge{}, PageInfo: &model.PageInfo{}}
	if len(links) > n {
		conn.PageInfo.HasNextPage = true
		links = links[:n]
	}
	comments := make([]*store.Artifact, 0, len(links))
	for _, l := range links {
		a := l.Other
		if a == nil {
			if a, err = ld.Artifact(ctx, l.FromPK); err != nil {
				return nil, err
			}
		}
		comments = append(comments, a)
		conn.Edges = append(conn.Edges, &model.ArtifactEdge{Cursor: encodePK(l.PK), Node: model.NewArtifact(a)})
	}
	if err := r.prefetch(ctx, comments, path(ctx, selection(ctx), "edges", "node")); err != nil {
		return nil, err
	}
	setPageInfo(conn.PageInfo, len(conn.Edges), func(i int) string { return conn.Edges[i].Cursor }, after != nil)
	pk := b.A.PK
	conn.CountFunc = func(ctx context.Context) (int, error) {
		return r.Store.CountLinks(ctx, pk, store.DirIn, []string{"comments_on"})
	}
	return conn, nil
}

func setPageInfo(pi *model.PageInfo, n int, cursor func(int) string, hasPrev bool) {
	pi.HasPreviousPage = hasPrev
	if n > 0 {
		start, end := cursor(0), cursor(n-1)
		pi.StartCursor, pi.EndCursor = &start, &end
	}
}

// Cursors over links and versions are opaque wrappers around a number.
func encodePK(pk int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("k:" + strconv.FormatInt(pk, 10)))
}

func decodePK(c *string, path string) (int64, error) {
	if c == nil || *c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(*c)
	if err == nil && len(b) > 2 && string(b[:2]) == "k:" {
		if v, err := strconv.ParseInt(string(b[2:]), 10, 64); err == nil && v >= 0 {
			return v, nil
		}
	}
	return 0, problem.Invalid(problem.Field(path, "cursor", "is not a cursor this server issued; pass an endCursor unchanged", *c))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
