package store

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// StatementCounter counts the SQL statements run on behalf of one request. The
// server puts one in each request's context; Tracer increments it. It is how
// tests (and curious operators) see that a nested query costs a constant number
// of statements, whatever the number of nodes it returns.
type StatementCounter struct{ n atomic.Int64 }

// Count returns the statements counted so far.
func (c *StatementCounter) Count() int64 { return c.n.Load() }

type counterKey struct{}

// WithStatementCounter returns ctx counting its statements into c.
func WithStatementCounter(ctx context.Context, c *StatementCounter) context.Context {
	return context.WithValue(ctx, counterKey{}, c)
}

// StatementCounterFrom returns the counter of ctx, if any.
func StatementCounterFrom(ctx context.Context) *StatementCounter {
	c, _ := ctx.Value(counterKey{}).(*StatementCounter)
	return c
}

// Tracer is a pgx query tracer that feeds the request's StatementCounter. Install
// it on the pool's connection config.
type Tracer struct{}

// TraceQueryStart counts the statement.
func (Tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if c := StatementCounterFrom(ctx); c != nil {
		c.n.Add(1)
	}
	return ctx
}

// TraceQueryEnd does nothing.
func (Tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
