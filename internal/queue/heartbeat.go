package queue

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/dbsqlc"
)

// Heartbeat is a process's liveness in tool_workers: every process that
// runs tool calls — a server serving synchronous ones, with or without
// queue workers, and `scidex worker` — has one, every call it runs names its
// id (dispatch.Opts.Process, Opts.Process), and while it beats those calls
// are its own. A process that stops beating (killed, or stopped without
// finishing them) has its calls recovered by any other's sweep
// (dispatch.Sweep, asking Liveness) once StaleAfter has passed, or at once
// when it said it was gone.
//
// It beats on its own ticker, apart from the sweep: a sweep held up by a
// slow database or many lost calls never makes its own process look dead.
type Heartbeat struct {
	pool  *pgxpool.Pool
	log   *slog.Logger
	id    string
	every time.Duration
}

// heartbeat is how often a process says it is alive (StaleAfter is several
// beats).
const heartbeat = 2 * time.Second

// NewHeartbeat names a new process; Beat registers it.
func NewHeartbeat(pool *pgxpool.Pool, log *slog.Logger) *Heartbeat {
	return &Heartbeat{pool: pool, log: log, id: uuid.Must(uuid.NewV7()).String(), every: heartbeat}
}

// ID is the process's id, as its calls name it.
func (h *Heartbeat) ID() string { return h.id }

// Beat records that the process is alive now (registering it the first
// time), and forgets processes long dead.
func (h *Heartbeat) Beat(ctx context.Context) error {
	db := dbsqlc.New(h.pool)
	if err := db.ToolWorkerBeat(ctx, h.id); err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	_ = db.ToolWorkersForget(ctx)
	return nil
}

// Run beats until ctx ends. Call Beat once before the process runs any
// call, so no call names a process that never beat.
func (h *Heartbeat) Run(ctx context.Context) error {
	tick := time.NewTicker(h.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if err := h.Beat(ctx); err != nil && ctx.Err() == nil {
				h.log.Warn("tool calls: heartbeat", "err", err)
			}
		}
	}
}

// Gone says the process has stopped: the calls it still names (a
// synchronous call cut off by a shutdown past its timeout) are recovered by
// the next sweep of any process, without waiting for the beat to go stale.
// Call it once the process runs nothing more.
func (h *Heartbeat) Gone(ctx context.Context) error {
	if err := dbsqlc.New(h.pool).ToolWorkerGone(ctx, h.id); err != nil {
		return fmt.Errorf("heartbeat: unregister: %w", err)
	}
	return nil
}
