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
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
)

// Invoke runs invokeTool: it returns the tool_call as it stands when the
// call returns (finished for a synchronous call, queued for an asynchronous
// one). A refusal before anything ran (unknown tool, bad args, not allowed,
// rate limited) is a problem and writes nothing; a tool that ran and failed
// is a finished call with status failed.
func (d *Dispatcher) Invoke(ctx context.Context, in InvokeInput) (*store.Artifact, error) {
	rc := request.From(ctx)
	t, err := d.load(ctx, in.Name, in.Version)
	if err != nil {
		return nil, err
	}
	if err := authorize(rc, t); err != nil {
		return nil, err
	}
	if err := d.checkArgs(t, in.Args); err != nil {
		return nil, err
	}
	if err := checkRecordBudget(in.Args); err != nil {
		return nil, err
	}
	if err := d.opts.Limits.allow(rc.Actor.ID, t.m.Name, rc.Now); err != nil {
		return nil, err
	}
	hash, err := inputsHash(in.Args)
	if err != nil {
		return nil, err
	}
	rec := &record{Tool: t.art.Ref().String(), ToolName: t.m.Name, ToolVersion: t.m.Version, Args: in.Args,
		InputsHash: hash, OutputViolations: []violation{}, Runtime: t.m.Runtime, SkillRun: in.SkillRun}
	if est := t.m.Estimate(); est > 0 {
		rec.CostEstimateUSD = &est
	}
	// The idempotency key stands for the call asked for, not the record.
	req := struct {
		Name    string          `json:"name"`
		Version string          `json:"version"`
		Args    json.RawMessage `json:"args"`
		Async   bool            `json:"async"`
	}{in.Name, t.m.Version, in.Args, in.Async}
	opts := store.ServerOpts{Request: req}

	if cached, ok, err := d.cached(ctx, t, hash); err != nil {
		return nil, err
	} else if ok {
		return d.recordCached(ctx, t, rec, cached, in.IdempotencyKey, opts)
	}
	if in.Async || t.m.WallTime() > d.opts.SyncLimit {
		return d.enqueue(ctx, t, rec, in.IdempotencyKey, opts)
	}
	if in.IdempotencyKey == "" && t.m.Runtime == "in_process" && rec.CostEstimateUSD == nil {
		return d.runThenRecord(ctx, t, rec)
	}
	// Record the call as running first, so it is visible while it runs and a
	// replay of its key finds it instead of running it again. It names this
	// process, so that if the process dies the call is recovered.
	id := uuid.Must(uuid.NewV7()).String()
	start := time.Now()
	rec.Status, rec.StartedAt, rec.JobID, rec.Worker = StatusRunning, Stamp(start), "sync-"+id, d.opts.Process
	res, err := d.record(ctx, t, id, in.IdempotencyKey, rec, EventStarted, opts, nil)
	if err != nil {
		return nil, err
	}
	if res.Replay {
		return d.current(ctx, res.Artifact)
	}
	return d.run(ctx, t, res.Artifact, rec, start, true)
}

// record writes a call's first record, unfinished, with what must commit
// with it (also: a queued call's job): a call that can cost something holds
// its estimate against its caller's budget in the same transaction, and is
// refused BUDGET_EXCEEDED, with nothing written, when it does not fit. A
// replay of an idempotency key writes nothing either: res.Replay, and
// res.Artifact is the first request's call.
func (d *Dispatcher) record(ctx context.Context, t *tool, id, key string, rec *record, ev string, opts store.ServerOpts,
	also func(ctx context.Context, tx *store.Tx) error) (*store.WriteResult, error) {
	if rec.CostEstimateUSD == nil && also == nil {
		return d.newCall(ctx, d.store, t, id, key, rec, ev, opts)
	}
	var res *store.WriteResult
	err := d.store.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if rc := request.From(ctx); rec.CostEstimateUSD != nil && rc.Actor.ID != auth.SystemID {
			if err := d.opts.Budgets.Hold(ctx, tx.Conn(), rc.Actor.ID, id, *rec.CostEstimateUSD, rc.Now); err != nil {
				return err
			}
		}
		if also != nil {
			if err := also(ctx, tx); err != nil {
				return err
			}
		}
		var err error
		res, err = d.newCall(ctx, tx.Store(), t, id, key, rec, ev, opts)
		if err == nil && res.Replay {
			return errReplay // the first request's call (and job) stand; drop ours
		}
		return err
	})
	if errors.Is(err, errReplay) {
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// runThenRecord is the fast path of a synchronous in_process call without an
// idempotency key: the tool runs first and the call is recorded once,
// finished. A call that cost nothing is one statement (the record and its
// tool_call.completed or .failed event: it was never visibly running, so
// there is no started event); one that cost something commits its record,
// its started and finished events and the budget debit together. A process
// that dies while it runs leaves nothing behind to recover.
func (d *Dispatcher) runThenRecord(ctx context.Context, t *tool, rec *record) (*store.Artifact, error) {
	rc := request.From(ctx)
	id := uuid.Must(uuid.NewV7()).String()
	start := time.Now()
	rec.StartedAt, rec.JobID, rec.Worker = Stamp(start), "sync-"+id, d.opts.Process
	rctx, traced := d.trace(ctx, t, id)
	out, runErr := d.execute(rctx, t, rec.Args, id, rc.Actor.ID, nil)
	ev := d.settle(t, rec, out, runErr, start, time.Now())
	traced(rec)
	return d.end(ctx, ending{t: t, rec: rec, ev: ev, id: id, returned: true})
}

// run executes a recorded call and finishes its record; returned says the
// finished call is the answer of a synchronous Invoke.
func (d *Dispatcher) run(ctx context.Context, t *tool, call *store.Artifact, rec *record, start time.Time, returned bool) (*store.Artifact, error) {
	rc := request.From(ctx)
	runCtx, cancel := context.WithCancel(ctx)
	d.running.Store(call.ID, cancel)
	defer func() {
		d.running.Delete(call.ID)
		cancel()
	}()
	rep := d.reporter(ctx, call)
	runCtx, traced := d.trace(runCtx, t, call.ID)
	out, runErr := d.execute(runCtx, t, rec.Args, call.ID, rc.Actor.ID, rep.Report)
	rep.Close() // every progress event before the finish event
	ev := d.settle(t, rec, out, runErr, start, time.Now())
	traced(rec)
	return d.end(ctx, ending{t: t, rec: rec, ev: ev, call: call, returned: returned})
}

// execute runs the tool in its runtime within its wall time.
func (d *Dispatcher) execute(ctx context.Context, t *tool, args json.RawMessage, callID, actor string, progress func(runtimes.Progress)) (*runtimes.Result, error) {
	rt := t.m.RuntimeTool(t.art.Ref().String(), d.opts.Bundles)
	if ps := t.rt.Check(rt); len(ps) > 0 {
		return nil, runtimes.Errorf(runtimes.CodeRefused, true, "%s: %s", ps[0].Path, ps[0].Message)
	}
	if state(t.art) != "active" {
		if name := t.m.SecretRef(); name != "" {
			// The operator's secret goes to reviewed code only: a draft (a new
			// version waiting for review, a granted name registered before the
			// operator's own tool) never carries it, even for its author.
			return nil, runtimes.Errorf(runtimes.CodeRefused, false,
				"tool %s %s names secret %s, which only a version a reviewer made active carries; this version is %s", t.m.Name, t.m.Version, name, state(t.art))
		}
	}
	// The runtime enforces the wall time; this deadline only bounds a runtime
	// that fails to.
	ctx, cancel := context.WithTimeout(ctx, rt.Caps.WallTime+30*time.Second)
	defer cancel()
	return t.rt.Run(ctx, &runtimes.Call{Tool: rt, Args: args, ID: callID, Actor: actor, Progress: progress})
}

// trace starts the span of a call's run when tracing is on; the function it
// returns ends it with the outcome settle recorded.
func (d *Dispatcher) trace(ctx context.Context, t *tool, callID string) (context.Context, func(*record)) {
	if d.opts.Tracer == nil {
		return ctx, untraced
	}
	ctx, end := d.opts.Tracer.StartCall(ctx, t.m.Name, t.m.Version, t.m.Runtime, callID)
	return ctx, func(rec *record) {
		code := ""
		if rec.Error != nil {
			code = rec.Error.Code
		}
		end(rec.Status, costOf(rec), code)
	}
}

func untraced(*record) {}

// settle records a run's outcome in rec and names the event it ends with.
func (d *Dispatcher) settle(t *tool, rec *record, out *runtimes.Result, runErr error, start, end time.Time) string {
	if runErr == nil && out.Pending {
		// The work goes on outside the runtime (a skill_call's work packet,
		// which ResultRef names): the call waits, unfinished and not yet
		// costed, until the work's owner finishes it (waiting.go).
		rec.Status, rec.ResultRef = StatusQueued, out.ResultRef
		rec.ExpiresAt = SortableStamp(end.Add(d.packetTTL(t)))
		return EventWaiting
	}
	rec.finished(start, end, out, t.m.Cost(end.Sub(start)))
	if runErr != nil {
		e := runtimes.AsError(runErr)
		if e.Setup && !isRuntimeError(runErr) {
			// Not a runtime's own classification: do not show its text.
			d.log.Error("tool runtime failed", "tool", t.m.Name, "runtime", t.m.Runtime, "err", runErr)
			e = runtimes.Errorf(runtimes.CodeSetupFailed, true, "the %s runtime could not run the tool; the operator's log has the cause", t.m.Runtime)
		}
		rec.Status, rec.Error = StatusFailed, failure(e)
		if e.Code == runtimes.CodeCancelled {
			rec.Status = StatusCancelled
			return EventCancelled
		}
		return EventFailed
	}
	rec.Status, rec.Result, rec.ResultRef = StatusSucceeded, out.Output, out.ResultRef
	named, logic := outputMarks(out.Output)
	if rec.ResultRef == "" {
		rec.ResultRef = named
	}
	rec.CheckLogicVersion = logic
	rec.OutputViolations = d.checkOutput(t, out.Output)
	return EventCompleted
}

func isRuntimeError(err error) bool {
	var e *runtimes.Error
	return errors.As(err, &e)
}

// current is the newest version of a call.
func (d *Dispatcher) current(ctx context.Context, call *store.Artifact) (*store.Artifact, error) {
	a, err := d.store.ServerGet(ctx, "invokeTool", ref.Ref{Type: CallType, ID: call.ID})
	if err != nil {
		return nil, fmt.Errorf("read tool call %s: %w", call.ID, err)
	}
	return a, nil
}

func eventPayload(call *store.Artifact, rec *record) map[string]any {
	p := map[string]any{"ref": call.Ref().String(), "tool": rec.ToolName, "toolVersion": rec.ToolVersion, "status": rec.Status}
	if rec.Error != nil {
		p["error"] = map[string]any{"code": rec.Error.Code, "message": rec.Error.Message, "setup": rec.Error.Setup}
	}
	if rec.DurationMS != nil {
		p["durationMs"] = *rec.DurationMS
	}
	return p
}

func title(t *tool) string { return t.m.Name + " " + t.m.Version }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("dispatch: encode %T: %v", v, err))
	}
	return b
}

// RecordResultArtifact notes on a finished call the skill_result runSkill
// stored for it (result_artifact_id): the ledger points at the result it
// led to.
func (d *Dispatcher) RecordResultArtifact(ctx context.Context, call *store.Artifact, resultRef string) (*store.Artifact, error) {
	for attempt := 0; ; attempt++ {
		cur, rec, err := d.loadCall(ctx, call.ID)
		if err != nil || cur == nil || rec.ResultArtifactID == resultRef {
			return cur, err
		}
		rec.ResultArtifactID = resultRef
		res, err := d.store.ServerUpdate(request.With(ctx, later(request.From(ctx))), "runSkill", store.UpdateParams{Ref: cur.Unpinned().String(),
			BaseContentHash: cur.ContentHash, Content: mustJSON(rec)})
		if p, ok := problem.As(err); ok && p.Code == problem.VersionConflict && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return res.Artifact, nil
	}
}

// outputMarks reads what a tool's output says of itself: the result_ref of
// the artifact it stored its result as (gate_run's gate_result), and the
// check_logic_version of the calculation that ran (a skill's).
func outputMarks(out json.RawMessage) (resultRef, logicVersion string) {
	var o struct {
		ResultRef    string `json:"result_ref"`
		LogicVersion string `json:"check_logic_version"`
	}
	if json.Unmarshal(out, &o) != nil {
		return "", ""
	}
	if _, err := ref.Parse(o.ResultRef); err != nil {
		o.ResultRef = ""
	}
	return o.ResultRef, o.LogicVersion
}
