package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/dbsqlc"
)

// StaleAfter is how long a process may miss its heartbeat before the calls
// it was running count as lost.
const StaleAfter = 10 * time.Second

// Liveness answers what the beats in tool_workers are for: whether a
// process is alive, and which running calls name a process that is not. The
// dispatcher asks it (a queued call found running, the sweep for lost
// calls); the beats themselves are each process's Heartbeat.
type Liveness struct{ pool *pgxpool.Pool }

// NewLiveness reads the beats in pool's tool_workers.
func NewLiveness(pool *pgxpool.Pool) *Liveness { return &Liveness{pool: pool} }

// Alive says whether process beat within StaleAfter.
func (l *Liveness) Alive(ctx context.Context, process string) (bool, error) {
	return dbsqlc.New(l.pool).ToolWorkerAlive(ctx, process, StaleAfter.Seconds())
}

// LostCalls returns the ids of running tool calls (up to 100 at a time)
// whose process has not beaten within StaleAfter, or said it was gone: it
// died mid-call, or stopped without finishing them. It reads only the calls
// that are unfinished (the index of live calls, migration 0016).
func (l *Liveness) LostCalls(ctx context.Context) ([]string, error) {
	ids, err := dbsqlc.New(l.pool).ToolCallsLost(ctx, StaleAfter.Seconds())
	if err != nil {
		return nil, fmt.Errorf("find lost tool calls: %w", err)
	}
	return ids, nil
}
