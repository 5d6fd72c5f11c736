package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// What metrics add to one GraphQL request over HTTP: the route's counter
// and histogram around the handler, the operation interceptor around the
// operation and its response. (The Prism page costs the server about
// 1.8 ms of CPU: bench/RESULTS.md P1.)
func BenchmarkRequestOverhead(b *testing.B) {
	doc, err := parser.ParseQuery(&ast.Source{Input: `query Prism($ref: Ref!) { artifact(ref: $ref) { title } }`})
	if err != nil {
		b.Fatal(err)
	}
	oc := &graphql.OperationContext{Operation: doc.Operations[0]}
	resp := &graphql.Response{Data: []byte(`{}`)}
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			var m *Metrics
			if on {
				m = New(Opts{Routes: []string{"/graphql", "/mcp"}})
			}
			ext, _ := m.GraphQL().(gqlMetrics)
			h := m.InstrumentHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx := graphql.WithOperationContext(r.Context(), oc)
				op := func(ctx context.Context) graphql.ResponseHandler {
					return func(context.Context) *graphql.Response { return resp }
				}
				var rh graphql.ResponseHandler
				if on {
					rh = ext.InterceptOperation(ctx, op)
				} else {
					rh = op(ctx)
				}
				_ = rh(ctx)
				w.WriteHeader(http.StatusOK)
			}))
			req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				h.ServeHTTP(discardWriter{}, req)
			}
		})
	}
}

// BenchmarkToolCallFinished is the cost of one finished call's metrics.
func BenchmarkToolCallFinished(b *testing.B) {
	m := New(Opts{})
	b.ReportAllocs()
	for range b.N {
		m.ToolCallFinished("checksum.sha256", "in_process", "succeeded", time.Millisecond, 0.01)
	}
}

type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (discardWriter) WriteHeader(int)             {}
