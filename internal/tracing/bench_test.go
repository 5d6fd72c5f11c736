package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// discard is an exporter that drops every batch.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// What tracing adds to a request, every span sampled and batched to an
// exporter that drops them: the HTTP server span and six statement spans
// (a P1 page's HTTP, GraphQL and ~4 statements) over a handler that does
// nothing else.
func BenchmarkRequestSpans(b *testing.B) {
	tr, err := New(context.Background(), Config{On: true, Sampler: sdktrace.AlwaysSample()}, Opts{Exporter: discard{}, Routes: []string{"/graphql"}})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	pt := tr.Pgx()
	h := tr.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for range 6 {
			ctx := pt.TraceQueryStart(r.Context(), nil, pgx.TraceQueryStartData{SQL: "-- name: ArtifactGetByID :one\nSELECT 1"})
			pt.TraceQueryEnd(ctx, nil, pgx.TraceQueryEndData{})
		}
	}))
	req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}
