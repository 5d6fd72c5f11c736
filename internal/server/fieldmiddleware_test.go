package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/scidex/substrate/graph/stock"
	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/server"
)

// fieldRecorder is a field middleware, as a tracer or a field authorizer
// would be: it records every field it sees.
type fieldRecorder struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (*fieldRecorder) ExtensionName() string                   { return "fieldRecorder" }
func (*fieldRecorder) Validate(graphql.ExecutableSchema) error { return nil }
func (r *fieldRecorder) saw(name string) bool                  { r.mu.Lock(); defer r.mu.Unlock(); return r.seen[name] }
func (r *fieldRecorder) record(fc *graphql.FieldContext) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[fc.Object+"."+fc.Field.Name] = true
}
func (r *fieldRecorder) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	r.record(graphql.GetFieldContext(ctx))
	return next(ctx)
}

// A field middleware would miss every field the rewritten executor marshals
// straight from its object, so the server refuses one at start, saying why,
// unless it serves gqlgen's stock executor; with that, the middleware sees
// every field.
func TestFieldMiddlewareNeedsTheStockExecutor(t *testing.T) {
	_, err := app.New(app.Config{Pool: dbtest.Pool(t), Server: server.Opts{Extensions: []graphql.HandlerExtension{&fieldRecorder{}}}})
	for _, want := range []string{"fieldRecorder", "intercepts fields", "straight from their objects", "Opts.Executor = stock.New"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}

	rec := &fieldRecorder{seen: map[string]bool{}}
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) {
		o.Executor = stock.New
		o.Extensions = []graphql.HandlerExtension{rec}
	}})
	tok := apitest.Contributor(t, "ada")
	h := createH(t, env, tok, map[string]any{"title": "traced", "content": map[string]any{"target_gene": "TREM2"}})
	env.OK(t, tok, `query($ref: Ref!) { artifact(ref: $ref) { ref title createdBy { id } ... on Hypothesis { targetGene } } }`,
		map[string]any{"ref": unpinned(h.Ref)}, nil)
	// Hypothesis.ref, .title and Actor.id are plain fields the rewritten
	// executor marshals without middleware.
	for _, f := range []string{"Query.artifact", "Hypothesis.ref", "Hypothesis.title", "Hypothesis.createdBy", "Actor.id", "Hypothesis.targetGene"} {
		if !rec.saw(f) {
			t.Errorf("the field middleware did not see %s", f)
		}
	}
}
