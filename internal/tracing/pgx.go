package tracing

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// MaxStatementBytes bounds the statement text a span carries.
const MaxStatementBytes = 2048

// Attribute keys of the statement spans (OpenTelemetry's database
// conventions).
const (
	attrDBSystem    = attribute.Key("db.system.name")
	attrDBQuery     = attribute.Key("db.query.text")
	attrDBOperation = attribute.Key("db.operation.name")
	attrDBStatus    = attribute.Key("db.response.status_code")
	attrDBRows      = attribute.Key("db.response.returned_rows")
	attrDBBatchSize = attribute.Key("db.operation.batch.size")
)

// Pgx is a pgx query and batch tracer making a client span of each
// statement: compose it with the pool's other tracers (pgx/multitracer).
// Nil when tracing is off.
//
// A statement gets a span only when its context already carries one (a
// request's, a job's, a tool call's): the server's own background queries
// (the hub's, the queue's polling, the heartbeat) would otherwise each start
// a trace of one span, every second. The span carries the statement text
// (for sqlc's queries it begins with their name, which also names the span)
// and, on failure, the SQLSTATE; never the arguments, which hold content
// and may hold secrets, nor the server's error message, which can quote them.
func (t *Tracing) Pgx() pgx.QueryTracer {
	if t == nil {
		return nil
	}
	return pgxTracer{t}
}

type pgxTracer struct{ t *Tracing }

var (
	_ pgx.QueryTracer = pgxTracer{}
	_ pgx.BatchTracer = pgxTracer{}
)

// pgxSpanKey holds the statement's span in the context pgx hands back to
// TraceQueryEnd; a private key, so that a statement without a span of its
// own never ends its parent's.
type pgxSpanKey struct{}

func (p pgxTracer) start(ctx context.Context, name string, attrs ...attribute.KeyValue) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	ctx, span := p.t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(append(attrs, attrDBSystem.String("postgresql"))...))
	return context.WithValue(ctx, pgxSpanKey{}, span)
}

func (p pgxTracer) end(ctx context.Context, err error, attrs ...attribute.KeyValue) {
	span, ok := ctx.Value(pgxSpanKey{}).(trace.Span)
	if !ok {
		return
	}
	span.SetAttributes(attrs...)
	if err != nil {
		code := "error"
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			code = pe.Code
			span.SetAttributes(attrDBStatus.String(pe.Code))
		}
		span.SetStatus(codes.Error, code)
	}
	span.End()
}

func (p pgxTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	name := statementName(data.SQL)
	return p.start(ctx, name, attrDBOperation.String(name), attrDBQuery.String(truncate(data.SQL, MaxStatementBytes)))
}

func (p pgxTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	p.end(ctx, data.Err, attrDBRows.Int64(data.CommandTag.RowsAffected()))
}

func (p pgxTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	n := 0
	if data.Batch != nil {
		n = data.Batch.Len()
	}
	return p.start(ctx, "batch", attrDBOperation.String("batch"), attrDBBatchSize.Int(n))
}

// TraceBatchQuery records each statement of a batch as an event of its span.
func (p pgxTracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	span, ok := ctx.Value(pgxSpanKey{}).(trace.Span)
	if !ok {
		return
	}
	attrs := []attribute.KeyValue{attrDBOperation.String(statementName(data.SQL))}
	var pe *pgconn.PgError
	if errors.As(data.Err, &pe) {
		attrs = append(attrs, attrDBStatus.String(pe.Code))
	}
	span.AddEvent("statement", trace.WithAttributes(attrs...))
}

func (p pgxTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
	p.end(ctx, data.Err)
}

// statementName is a bounded name for a statement: the name sqlc puts in its
// first line ("-- name: ArtifactGetByID :one"), else its first keyword
// (SELECT, INSERT, WITH…), else "statement".
func statementName(sql string) string {
	s := strings.TrimSpace(sql)
	if rest, ok := strings.CutPrefix(s, "-- name: "); ok {
		if name, _, ok := strings.Cut(rest, " "); ok && name != "" && len(name) <= 100 {
			return name
		}
	}
	for strings.HasPrefix(s, "--") { // other comment lines
		_, s, _ = strings.Cut(s, "\n")
		s = strings.TrimSpace(s)
	}
	end := strings.IndexFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
	if end < 0 {
		end = len(s)
	}
	if end == 0 || end > 12 {
		return "statement"
	}
	return strings.ToUpper(s[:end])
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Not inside a UTF-8 sequence.
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
