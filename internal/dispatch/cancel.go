package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
)

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
