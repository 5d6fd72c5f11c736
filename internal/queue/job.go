package queue

import (
	"context"
	"time"

	"github.com/scidex/substrate/internal/auth"
)

// Job is what the queue keeps of a call: enough to run it in another process.
type Job struct {
	CallID string `json:"call_id"`
	// Actor is the caller, on whose behalf the worker runs and records it.
	Actor auth.Actor `json:"actor"`
	// WallTime is the tool's wall time: the job may run a little longer.
	WallTime time.Duration `json:"wall_time"`
}

// Run is one start of a queued call's job, as the queue's worker sees it.
type Run struct {
	Job Job
	// JobID is the queue's id of the job (the call's job_id names the job
	// that owns it; any other is stale and does nothing).
	JobID string
	// Worker is the id of the process working it, whose heartbeat says it
	// is alive (Opts.Process: tool_workers).
	Worker string
}

// Runner works a job: the dispatcher (internal/dispatch), bound once it
// exists (Binder). It returns nil when the call is finished or was not there
// to run; an error asks the queue to retry the job.
type Runner interface {
	RunQueued(ctx context.Context, r Run) error
}
