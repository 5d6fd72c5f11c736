package dispatch

import (
	"context"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/store"
)

// Queue runs asynchronous calls: a durable job queue any server process or
// worker works. The job is inserted in the transaction that records the
// queued tool_call, so neither exists without the other.
type Queue interface {
	// Enqueue inserts job in tx and returns the queue's id for it.
	Enqueue(ctx context.Context, tx *store.Tx, job Job) (string, error)
	// Cancel stops a job: a queued one never runs, a running one's context
	// ends wherever it runs.
	Cancel(ctx context.Context, jobID string) error
}

// Job is what the queue keeps of a call: enough to run it in another process.
type Job struct {
	CallID string `json:"call_id"`
	// Actor is the caller, on whose behalf the worker runs and records it.
	Actor auth.Actor `json:"actor"`
	// WallTime is the tool's wall time: the job may run a little longer.
	WallTime time.Duration `json:"wall_time"`
}
