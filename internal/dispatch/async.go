package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/queue"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
)

// enqueue records a queued call and inserts its job in the same transaction.
func (d *Dispatcher) enqueue(ctx context.Context, t *tool, rec *record, key string, opts store.ServerOpts) (*store.Artifact, error) {
	if d.opts.Queue == nil {
		return nil, problem.New(problem.PermissionDenied, "this server has no job queue: tool %s cannot run asynchronously", t.m.Name)
	}
	rc := request.From(ctx)
	id := uuid.Must(uuid.NewV7()).String()
	job := queue.Job{CallID: id, Actor: rc.Actor, WallTime: t.m.WallTime()}
	rec.Status, rec.Async, rec.QueuedAt = StatusQueued, true, Stamp(rc.Now)
	res, err := d.record(ctx, t, id, key, rec, EventQueued, opts, func(ctx context.Context, tx *store.Tx) error {
		jobID, err := d.opts.Queue.Enqueue(ctx, tx, job)
		if err != nil {
			return fmt.Errorf("queue tool call: %w", err)
		}
		rec.JobID = jobID
		return nil
	})
	if err != nil {
		return nil, err
	}
	if res.Replay {
		return d.current(ctx, res.Artifact)
	}
	return res.Artifact, nil
}

// errReplay rolls back a queued call's transaction when its idempotency key
// was already used for the same call.
var errReplay = errors.New("idempotent replay")

// RunQueued works one queued call. It returns nil when the call is finished
// or was not there to run (cancelled, finished, owned by another job); an
// error asks the queue to retry it. A call found running whose worker is
// dead is recovered (see recover) rather than left running forever.
func (d *Dispatcher) RunQueued(ctx context.Context, r queue.Run) error {
	rc := request.System("tool-worker", time.Now())
	rc.Actor = r.Job.Actor
	ctx = request.With(ctx, rc)
	call, rec, err := d.loadCall(ctx, r.Job.CallID)
	if call == nil || err != nil {
		return err // nil: rolled back with its job, or never there
	}
	if rec.JobID != r.JobID {
		return nil // a stale job: the call was re-queued under another
	}
	switch rec.Status {
	case StatusQueued:
	case StatusRunning:
		alive, err := d.live.Alive(ctx, rec.Worker)
		if err != nil {
			return fmt.Errorf("check the worker of tool call %s: %w", call.ID, err)
		}
		if alive {
			return nil // its worker is alive and still on it
		}
		return d.recover(ctx, call, rec)
	default:
		return nil // finished or cancelled
	}
	t, err := d.load(ctx, rec.ToolName, rec.ToolVersion)
	if err != nil {
		if _, ok := problem.As(err); ok {
			rec.Status, rec.Error = StatusFailed, &callError{Code: runtimes.CodeRefused, Message: err.Error()}
			_, ferr := d.end(ctx, ending{t: named(rec), rec: rec, ev: EventFailed, call: call})
			return ferr
		}
		return err
	}
	start := time.Now()
	rec.Status, rec.StartedAt, rec.Worker = StatusRunning, Stamp(start), r.Worker
	rec.Attempt++
	res, err := d.store.ServerUpdate(request.With(ctx, later(rc)), "invokeTool", store.UpdateParams{Ref: call.Unpinned().String(),
		BaseContentHash: call.ContentHash, Content: mustJSON(rec)}, store.ServerOpts{Event: EventStarted})
	if p, ok := problem.As(err); ok && p.Code == problem.VersionConflict {
		return nil // cancelled, or taken by another worker, meanwhile
	}
	if err != nil {
		return fmt.Errorf("start tool call %s: %w", r.Job.CallID, err)
	}
	_, err = d.run(ctx, t, res.Artifact, rec, start, false)
	return err
}

// loadCall reads the call whose id is id; nil when there is none.
func (d *Dispatcher) loadCall(ctx context.Context, id string) (*store.Artifact, *record, error) {
	c, err := d.ReadCall(ctx, d.store, "invokeTool", CallType+":"+id)
	if c == nil || err != nil {
		return nil, nil, err
	}
	return c.Artifact, c.rec, nil
}
