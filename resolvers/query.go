package resolvers

import (
	"context"
	"errors"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/filter"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
	"github.com/scidex/substrate/internal/store"
)

var orderFields = map[model.ArtifactOrderField]store.OrderField{
	model.ArtifactOrderFieldCreatedAt:    store.OrderCreatedAt,
	model.ArtifactOrderFieldUpdatedAt:    store.OrderUpdatedAt,
	model.ArtifactOrderFieldTitle:        store.OrderTitle,
	model.ArtifactOrderFieldQualityScore: store.OrderQualityScore,
}

// lookup reads the artifact a ref names; absent is (nil, nil) for the nullable
// query fields, a malformed ref a VALIDATION_FAILED error naming it.
func (r *Resolver) lookup(ctx context.Context, s, arg string) (model.Artifact, error) {
	rf, err := ref.Parse(s)
	if err != nil {
		return nil, problem.Invalid(problem.Field(arg, "ref", err.Error(), s))
	}
	a, err := r.Store.Get(ctx, rf)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := r.prefetch(ctx, []*store.Artifact{a}, selection(ctx)); err != nil {
		return nil, err
	}
	return model.NewArtifact(a), nil
}

// listConnection serves a page of store.List (after the cursor after) as an
// ArtifactConnection, with what the query asks of its nodes loaded ahead.
func (r *Resolver) listConnection(ctx context.Context, p store.ListParams, after *string) (*model.ArtifactConnection, error) {
	if after != nil {
		p.After = *after
	}
	page, err := r.Store.List(ctx, p)
	if err != nil {
		return nil, err
	}
	if err := r.prefetch(ctx, page.Items, path(ctx, selection(ctx), "edges", "node")); err != nil {
		return nil, err
	}
	conn := &model.ArtifactConnection{Edges: make([]*model.ArtifactEdge, len(page.Items)), PageInfo: &model.PageInfo{HasNextPage: page.HasNext}}
	for i, a := range page.Items {
		conn.Edges[i] = &model.ArtifactEdge{Cursor: page.Cursors[i], Node: model.NewArtifact(a)}
	}
	setPageInfo(conn.PageInfo, len(conn.Edges), func(i int) string { return conn.Edges[i].Cursor }, after != nil)
	return conn, nil
}

func parseFilter(f model.JSON) (*filter.Expr, error) {
	if len(f) == 0 {
		return nil, nil
	}
	return filter.Parse("filter", []byte(f))
}

func (r *Resolver) schemaDoc(ctx context.Context, typ string, version *int) (*model.SchemaDoc, error) {
	var (
		t   *schema.Type
		err error
	)
	if version != nil {
		t, err = r.Store.Registry().GetVersion(ctx, typ, *version)
	} else {
		t, err = r.Store.Registry().Get(ctx, typ)
	}
	if errors.Is(err, schema.ErrUnknownType) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return schemaDocModel(t), nil
}

func schemaDocModel(t *schema.Type) *model.SchemaDoc {
	gql := model.Typed[t.Name()]
	if gql == "" {
		gql = "GenericArtifact"
	}
	return &model.SchemaDoc{Type: t.Name(), Version: t.Version, Title: t.Doc.Title, Description: t.Doc.Description,
		Mutability: string(t.Doc.Mutability), LockMode: t.Doc.LockMode, IDStrategy: t.Doc.IDStrategy,
		GraphqlType: gql, ContentHash: t.Hash, Document: model.JSON(t.Raw)}
}

func me(ctx context.Context) *model.Actor {
	rc := request.From(ctx)
	if rc == nil {
		return &model.Actor{ID: "anonymous", Kind: "anonymous", Permissions: []string{}}
	}
	perms := make([]string, len(rc.Actor.Permissions))
	for i, p := range rc.Actor.Permissions {
		perms[i] = string(p)
	}
	return &model.Actor{ID: rc.Actor.ID, Kind: rc.Actor.Kind, Permissions: perms}
}

// lookupUnpinned reads the current version of the artifact a (possibly pinned)
// ref names; nil when absent.
func (r *Resolver) lookupUnpinned(ctx context.Context, s string) (model.Artifact, error) {
	rf, err := ref.Parse(s)
	if err != nil {
		return nil, nil
	}
	return r.lookup(ctx, rf.Unpinned().String(), "ref")
}

// searchPage runs a search from after and loads ahead what the query asks of
// the hits' artifacts, found at node (the path to them in the selection).
func (r *Resolver) searchPage(ctx context.Context, p store.SearchParams, after *string, node ...string) (*store.SearchResult, error) {
	if after != nil {
		p.After = *after
	}
	res, err := r.Store.Search(ctx, p)
	if err != nil {
		return nil, err
	}
	arts := make([]*store.Artifact, len(res.Hits))
	for i, h := range res.Hits {
		arts[i] = h.Artifact
	}
	if err := r.prefetch(ctx, arts, path(ctx, selection(ctx), node...)); err != nil {
		return nil, err
	}
	return res, nil
}
