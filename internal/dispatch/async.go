package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/queue"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolspec"
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

// RecoverLost recovers the running calls whose process stopped beating
// (synchronous or queued: every running call names the process running it):
// the sweep (Sweep) runs it every few seconds in every process. It returns
// how many it recovered.
func (d *Dispatcher) RecoverLost(ctx context.Context) (int, error) {
	ids, err := d.live.LostCalls(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		call, rec, err := d.loadCall(ctx, id)
		if call == nil || err != nil || rec.Status != StatusRunning {
			continue
		}
		if err := d.recover(AsCaller(ctx, call, "tool-recover"), call, rec); err != nil {
			d.log.Warn("recover a lost tool call", "call", id, "err", err)
			continue
		}
		n++
	}
	return n, nil
}

// AsCaller is ctx for the server recording a call's outcome on behalf of
// the caller who made it (source names the server's part doing it).
func AsCaller(ctx context.Context, call *store.Artifact, source string) context.Context {
	rc := request.System(source, time.Now())
	rc.Actor = auth.Actor{ID: call.CreatedBy, Kind: auth.KindHuman, Permissions: []auth.Permission{auth.PermContributor}}
	return request.With(ctx, rc)
}

// named is the tool of a call whose tool could not be loaded: its name only.
func named(rec *record) *tool { return &tool{m: &toolspec.Manifest{Name: rec.ToolName}} }

// recover ends a call whose process died mid-call: a queued call of an
// idempotent tool with retries left is queued again under a new job (the
// old job, if the queue ever starts it again, finds the call no longer its
// own); any other — every synchronous call among them, whose caller is gone
// with the process — is recorded failed with worker_lost. Either way it is
// not left running.
func (d *Dispatcher) recover(ctx context.Context, call *store.Artifact, rec *record) error {
	rc := later(request.From(ctx))
	ctx = request.With(ctx, rc)
	t, err := d.load(ctx, rec.ToolName, rec.ToolVersion)
	if _, ok := problem.As(err); err != nil && !ok {
		return err
	}
	if err != nil {
		t = named(rec) // gone or no longer runnable: it is not run again
	}
	retries := t.m.RetryBudget()
	if rec.Async && t.art != nil && rec.Attempt <= retries && d.opts.Queue != nil {
		job := queue.Job{CallID: call.ID, Actor: rc.Actor, WallTime: t.m.WallTime()}
		return d.store.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			jobID, err := d.opts.Queue.Enqueue(ctx, tx, job)
			if err != nil {
				return err
			}
			rec.Status, rec.JobID, rec.Worker, rec.QueuedAt = StatusQueued, jobID, "", Stamp(rc.Now)
			_, err = tx.Store().ServerUpdate(ctx, "invokeTool", store.UpdateParams{Ref: call.Unpinned().String(),
				BaseContentHash: call.ContentHash, Content: mustJSON(rec)}, store.ServerOpts{Event: EventQueued})
			return err
		})
	}
	rec.Status = StatusFailed
	msg := "the server process running the call stopped before it finished (a synchronous call is not run again)"
	if rec.Async {
		msg = fmt.Sprintf("the worker running the call stopped (attempt %d of %d) and the tool is not retried further", rec.Attempt, retries+1)
	}
	rec.Error = &callError{Code: CodeWorkerLost, Setup: true, Message: msg}
	rec.finished(startOf(rec, rc.Now), rc.Now, nil, 0)
	_, err = d.end(ctx, ending{t: t, rec: rec, ev: EventFailed, call: call})
	if err == nil {
		d.abandon(ctx, call.ID, rec)
	}
	return err
}

// Cancel runs cancelToolCall: a queued or running call becomes cancelled
// (its job is cancelled, a sandbox running it is killed); a finished call is
// a LIFECYCLE_VIOLATION. Only the caller who made it and admins may cancel it.
func (d *Dispatcher) Cancel(ctx context.Context, id, idempotencyKey string) (*store.Artifact, error) {
	rc := request.From(ctx)
	if rc == nil || rc.Anonymous || !rc.Actor.Has(auth.PermContributor) {
		return nil, problem.New(problem.PermissionDenied, "cancelling a tool call needs the contributor permission")
	}
	first, ctx, err := d.Replayed(ctx, "cancelToolCall", idempotencyKey, struct {
		ID string `json:"id"`
	}{id})
	if first != nil || err != nil {
		return first, err
	}
	for attempt := 0; ; attempt++ {
		call, err := d.store.Get(ctx, ref.Ref{Type: CallType, ID: id})
		if errors.Is(err, store.ErrNotFound) {
			return nil, problem.NotFoundRef(CallType + ":" + id)
		}
		if err != nil {
			return nil, err
		}
		if call.CreatedBy != rc.Actor.ID && !rc.Actor.Has(auth.PermAdmin) {
			return nil, problem.New(problem.PermissionDenied, "only the actor who made tool call %s, or an admin, may cancel it", id)
		}
		var rec record
		if err := json.Unmarshal(call.Content, &rec); err != nil {
			return nil, fmt.Errorf("decode tool call %s: %w", id, err)
		}
		if rec.Status != StatusQueued && rec.Status != StatusRunning {
			return nil, problem.New(problem.LifecycleViolation, "tool call %s already finished (%s); only a queued or running call can be cancelled", id, rec.Status)
		}
		now := time.Now()
		rec.Status = StatusCancelled
		rec.Error = &callError{Code: runtimes.CodeCancelled, Message: "cancelled by " + rc.Actor.ID}
		rec.finished(startOf(&rec, now), now, nil, 0)
		p, opts := Keyed(ctx, store.UpdateParams{}, store.ServerOpts{})
		a, err := d.end(ctx, ending{t: named(&rec), rec: &rec, ev: EventCancelled, call: call, op: "cancelToolCall",
			key: p.IdempotencyKey, opts: opts, strict: true})
		if p, ok := problem.As(err); ok && p.Code == problem.VersionConflict && attempt < 3 {
			continue // it moved (started, progressed); look again
		}
		if err != nil {
			return nil, err
		}
		d.stopLocal(id)
		d.abandon(ctx, id, &rec)
		if rec.Async && rec.JobID != "" && d.opts.Queue != nil {
			if err := d.opts.Queue.Cancel(ctx, rec.JobID); err != nil {
				d.log.Warn("cancel tool job", "call", id, "job", rec.JobID, "err", err)
			}
		}
		return a, nil
	}
}

// stopLocal ends a call running in this process; the queue (or the
// cancelled event, for another process's synchronous call) stops the others.
func (d *Dispatcher) stopLocal(id string) {
	if c, ok := d.running.Load(id); ok {
		c.(context.CancelFunc)()
	}
}

// Cancelled is told of a tool_call.cancelled event from any process: the
// call stops here if it runs here.
func (d *Dispatcher) Cancelled(callID string) { d.stopLocal(callID) }

// Sweep recovers lost calls and runs the Awaiter's step (internal/workpacket
// expires the packets nobody completed), at once and then every
// Opts.SweepEvery until ctx ends. Every process runs it:
// the index of live calls (migration 0016) makes a sweep read only the calls
// that are unfinished. It only reads whether processes beat; beating is the
// heartbeat's, on its own ticker (queue.Heartbeat), so a slow sweep never
// makes its own process look dead.
func (d *Dispatcher) Sweep(ctx context.Context) error {
	if d.opts.SweepEvery < 0 {
		return nil
	}
	tick := time.NewTicker(d.opts.SweepEvery)
	defer tick.Stop()
	for {
		if n, err := d.RecoverLost(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("recover lost tool calls", "err", err)
		} else if n > 0 {
			d.log.Info("recovered tool calls whose process stopped", "count", n)
		}
		if d.awaiter != nil {
			d.awaiter.Sweep(ctx) // the work packets nobody completed in time
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
