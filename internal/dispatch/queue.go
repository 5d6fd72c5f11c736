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
	// MaxAttempts is how many times the queue may start this job: twice, so
	// that a job whose worker died is started once more by the queue's own
	// rescue (if the heartbeat sweep has not already recovered the call).
	// Retries of the tool are new jobs (Dispatcher.recover).
	MaxAttempts int `json:"max_attempts"`
	// Retries is the tool's declared retries (0 for a tool not idempotent).
	Retries int `json:"retries"`
	// WallTime is the tool's wall time: the job may run a little longer.
	WallTime time.Duration `json:"wall_time"`
}
