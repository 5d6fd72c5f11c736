package dispatch

import (
	"context"

	"github.com/scidex/substrate/internal/queue"
	"github.com/scidex/substrate/internal/store"
)

// Queue runs asynchronous calls: a durable job queue any server process or
// worker works (internal/queue's RiverQueue, which runs each job through
// RunQueued). The job is inserted in the transaction that records the queued
// tool_call, so neither exists without the other.
type Queue interface {
	// Enqueue inserts job in tx and returns the queue's id for it.
	Enqueue(ctx context.Context, tx *store.Tx, job queue.Job) (string, error)
	// Cancel stops a job: a queued one never runs, a running one's context
	// ends wherever it runs.
	Cancel(ctx context.Context, jobID string) error
}
