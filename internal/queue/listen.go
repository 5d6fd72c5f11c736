package queue

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// listenDriver is River's pgx driver with its LISTEN connection taken from a
// pool of its own: every query goes through the main pool (which may be a
// transaction pooler such as PgBouncer), LISTEN straight to PostgreSQL. A
// LISTEN through a transaction pooler succeeds but hears nothing, since the
// pooler hands the server connection it was issued on to other clients:
// River would still work jobs, but only when it polls (PollEvery) instead of
// the moment one is queued, and would notice cancellations and a lost leader
// late.
type listenDriver struct {
	*riverpgxv5.Driver
	listen *riverpgxv5.Driver
}

// GetListener implements riverdriver.Driver with the direct pool.
func (d listenDriver) GetListener(p *riverdriver.GetListenenerParams) riverdriver.Listener {
	return d.listen.GetListener(p)
}

// newListenPool is the pool River's listener takes its one connection from
// (it holds it; a second is for reconnecting while the first is being
// closed). Nothing connects until River listens.
func newListenPool(listen *pgx.ConnConfig) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, fmt.Errorf("queue: listen pool: %w", err)
	}
	cfg.ConnConfig = listen.Copy()
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("queue: listen pool: %w", err)
	}
	return pool, nil
}
