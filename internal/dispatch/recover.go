package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/queue"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolspec"
)

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
