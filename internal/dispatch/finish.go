package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scidex/substrate/internal/budget"
	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
	"github.com/scidex/substrate/internal/store"
)

// The ledger's one transition. A call is recorded once (newCall: running,
// queued, or already finished) and then moves only through end: the
// synchronous run, the fast path, the queue's worker, the recovery of a lost
// call, and the end of the outside work a call waited on (a work packet
// completed or expired, through Finish: waiting.go) all finish a call by
// building an ending and handing it over. end writes the status, result or
// error, actuals and cost with the finish event and the budget debit in one
// transaction, and then, once committed, counts the call, stamps what it
// produced, fills the cache and tells OnFinish. A finish that cannot be
// written (its record over the content cap, a value the database refuses)
// writes a minimal failed record instead, so no call is left running by a
// finish that failed.

// ending is one finish of a call.
type ending struct {
	t   *tool
	rec *record
	// ev is the event the finish emits: tool_call.completed, .failed,
	// .cancelled, or tool_call.waiting for a call that now waits on a work
	// packet (not a finish: nothing after the write happens for it).
	ev string
	// call is the call's current version; nil records the call now, for the
	// first time, already finished (the fast path, a cache hit), as id. key
	// and opts are the idempotency key of the write and what it is bound to.
	call *store.Artifact
	id   string
	key  string
	opts store.ServerOpts
	// op is the operation the writes are journaled as (default invokeTool).
	op string
	// returned says the finished call is the answer of a synchronous Invoke,
	// whose caller sees it (runSkill stores its skill_result itself):
	// OnFinish is told of every other finish.
	returned bool
	// strict returns a VERSION_CONFLICT of the call's write as an error (the
	// caller retries); by default the call moved because it was cancelled
	// meanwhile, and its current version is the answer.
	strict bool
	// also writes, in the finish's transaction and before it, what else the
	// finish is part of (the work packet completed or expired). Its failure
	// fails the finish as it is, with no fallback record.
	also func(ctx context.Context, s *store.Store) error
	// stamps lists the artifacts the call produced, stamped with produced
	// (default: the record's result_ref, produced by the tool).
	stamps   []string
	produced schema.ProducedBy
}

// alsoError is the failure of an ending's also: passed on as it is.
type alsoError struct{ err error }

func (e alsoError) Error() string { return e.err.Error() }
func (e alsoError) Unwrap() error { return e.err }

// end is the transition: every finish of a call goes through it.
func (d *Dispatcher) end(ctx context.Context, e ending) (*store.Artifact, error) {
	if e.op == "" {
		e.op = "invokeTool"
	}
	ctx = request.With(context.WithoutCancel(ctx), later(request.From(ctx)))
	if e.ev != EventWaiting {
		e.rec.Progress, e.rec.ExpiresAt = nil, ""
		if e.rec.FinishedAt == "" {
			e.rec.finished(startOf(e.rec, request.From(ctx).Now), request.From(ctx).Now, nil, 0)
		}
	}
	a, replay, err := d.write(ctx, e)
	var ae alsoError
	switch p, ok := problem.As(err); {
	case err == nil:
	case errors.As(err, &ae):
		return nil, ae.err
	case ok && p.Code == problem.VersionConflict && !e.strict && e.call != nil:
		return d.current(ctx, e.call)
	case ok && p.Code != problem.ValidationFailed, e.op == "cancelToolCall":
		// Refused as asked (a conflict, a reused key), or a cancellation that
		// did not happen: nothing was written, and the caller is told.
		return nil, err
	default:
		// The outcome could not be written (a record the store refuses, a
		// value the database does): write what can be, a failed record saying
		// why, rather than leave the call running.
		e = d.fallback(e, err)
		if a, replay, err = d.write(ctx, e); err != nil {
			return nil, fmt.Errorf("finish tool call: %w", err)
		}
	}
	if e.ev != EventWaiting && !replay {
		d.ended(unkeyed(ctx), e, a) // the key was the finish's (its also's) alone
	}
	return a, nil
}

// write writes an ending: the call's record with its finish event, the
// budget debit, and the ending's other writes. A call first recorded now
// that cost nothing is one statement. replay says the call was recorded
// already, by the first request with its idempotency key: a is its current
// version, and nothing was written.
func (d *Dispatcher) write(ctx context.Context, e ending) (a *store.Artifact, replay bool, err error) {
	debit := e.rec.CostUSD != nil && *e.rec.CostUSD > 0
	// A finish settles the caller's budget: the call's hold, if it took one,
	// is released and what it cost is spent.
	settle := e.ev != EventWaiting && (debit || e.rec.CostEstimateUSD != nil)
	if e.call == nil && !settle && e.also == nil {
		res, err := d.newCall(ctx, d.store, e.t, e.id, e.key, e.rec, e.ev, e.opts)
		if err != nil {
			return nil, false, err
		}
		if res.Replay {
			a, err := d.current(ctx, res.Artifact)
			return a, true, err
		}
		return res.Artifact, false, nil
	}
	var left *budget.Budget
	err = d.store.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		s := tx.Store()
		// The debit is the caller's, who asked for the call, whoever finishes it.
		caller, id := request.From(ctx).Actor.ID, e.id
		if e.call != nil {
			caller, id = e.call.CreatedBy, e.call.ID
		}
		if settle {
			// First: every transaction that takes the budget's lock takes it
			// before it writes a call.
			var err error
			if left, err = d.opts.Budgets.Settle(ctx, tx.Conn(), caller, id, costOf(e.rec), request.From(ctx).Now); err != nil {
				return err
			}
		}
		if e.also != nil {
			if err := e.also(ctx, s); err != nil {
				return alsoError{err}
			}
		}
		ev := e.ev
		if e.call == nil {
			// First recorded now: it starts and finishes in this transaction.
			res, err := d.newCall(ctx, s, e.t, e.id, e.key, e.rec, EventStarted, e.opts)
			if err != nil {
				return err
			}
			if a, replay = res.Artifact, res.Replay; replay {
				return errReplay
			}
		} else {
			opts := e.opts
			opts.Event, opts.Known = ev, e.t.known()
			res, err := s.ServerUpdate(ctx, e.op, store.UpdateParams{Ref: e.call.Unpinned().String(),
				BaseContentHash: e.call.ContentHash, Content: mustJSON(e.rec), IdempotencyKey: e.key}, opts)
			if err != nil {
				return err
			}
			a, ev = res.Artifact, ""
		}
		if ev != "" {
			if err := s.ServerEvent(ctx, e.op, store.EventParams{Type: ev, Ref: a.Ref().String(), Payload: eventPayload(a, e.rec)}); err != nil {
				return err
			}
		}
		if !debit {
			return nil
		}
		payload := map[string]any{"actor": caller, "amount_usd": *e.rec.CostUSD, "tool": e.rec.ToolName, "tool_call": a.Unpinned().String()}
		if left != nil {
			payload["spent_usd"] = left.SpentUSD
			if r := left.RemainingUSD(); r != nil {
				payload["remaining_usd"] = *r
			}
		}
		return s.ServerEvent(ctx, e.op, store.EventParams{Type: EventDebited, Ref: a.Ref().String(), Audience: []string{caller}, Payload: payload})
	})
	if replay {
		a, err = d.current(ctx, a)
		return a, true, err
	}
	if err != nil {
		return nil, false, err
	}
	return a, false, nil
}

// costOf is what a finished call cost (0 when it says nothing).
func costOf(rec *record) float64 {
	if rec.CostUSD == nil {
		return 0
	}
	return *rec.CostUSD
}

// fallback is the minimal failed record of an ending whose write failed
// with err: the call's arguments and actuals with an error saying why
// (result_too_large when the record is over the content cap), no result.
// Its other writes (also) stand: only the call's record failed.
func (d *Dispatcher) fallback(e ending, err error) ending {
	r := *e.rec
	size := 0
	if c, cerr := canon.Canonical(mustJSON(e.rec)); cerr == nil {
		size = len(c)
	}
	if size > store.MaxContentBytes {
		r.Error = &callError{Code: CodeResultTooLarge, Message: fmt.Sprintf(
			"the tool ran, but its finished record would be %d bytes of canonical JSON, over the %d-byte content cap: its result (%d bytes) and output violations (%d) are not kept; return a smaller result, or store a large one as a file and return its ref",
			size, store.MaxContentBytes, len(e.rec.Result), len(e.rec.OutputViolations))}
	} else {
		d.log.Error("tool call: its finished record could not be written", "tool", e.rec.ToolName, "status", e.rec.Status, "err", err)
		r.Error = &callError{Code: CodeFinishFailed, Message: "the tool ran, but its outcome could not be recorded; the operator's log has the cause"}
	}
	r.Status, r.Result, r.ResultRef, r.OutputViolations, r.CheckLogicVersion, r.Progress = StatusFailed, nil, "", []violation{}, "", nil
	e.rec, e.ev, e.stamps = &r, EventFailed, nil
	return e
}

// ended does what follows a committed finish outside its transaction: the
// usage count, the provenance stamps of what the call produced, the cache,
// and OnFinish.
func (d *Dispatcher) ended(ctx context.Context, e ending, call *store.Artifact) {
	rec := e.rec
	d.usage.add(e.t.m.Name)
	if d.opts.Metrics != nil {
		var took time.Duration
		if rec.DurationMS != nil {
			took = time.Duration(*rec.DurationMS) * time.Millisecond
		}
		var cost float64
		if rec.CostUSD != nil {
			cost = *rec.CostUSD
		}
		d.opts.Metrics.ToolCallFinished(e.t.m.Name, rec.Runtime, rec.Status, took, cost)
	}
	if rec.Status == StatusSucceeded {
		stamps, pb := e.stamps, e.produced
		if stamps == nil && rec.ResultRef != "" {
			// The result artifact came from this tool, for the caller (the
			// request's actor, StampProvenance's default). Best effort: the
			// store logs a stamp it refuses; a replay never gets here, and the
			// same stamp again would change nothing.
			stamps, pb = []string{rec.ResultRef}, schema.ProducedBy{Tool: e.t.m.Name}
		}
		for _, r := range stamps {
			d.store.StampProvenance(ctx, r, pb)
		}
		if len(rec.OutputViolations) == 0 && !rec.Cached && e.t.art != nil {
			d.storeCache(e.t, rec)
		}
	}
	if d.opts.OnFinish != nil && !e.returned {
		// On behalf of the caller, whoever finished the call (an agent
		// completing its packet, the sweep).
		if rc := request.From(ctx); rc == nil || rc.Actor.ID != call.CreatedBy {
			ctx = AsCaller(ctx, call, "tool-finish")
		}
		d.opts.OnFinish(ctx, d, call)
	}
}

// newCall writes a call's first record through s (a transaction's store, or
// the dispatcher's): every path that records a call — running, queued,
// finished by the fast path, answered from the cache — creates it here, so
// what a tool_call is created with is said once.
func (d *Dispatcher) newCall(ctx context.Context, s *store.Store, t *tool, id, key string, rec *record, ev string, opts store.ServerOpts) (*store.WriteResult, error) {
	opts.Event, opts.Known = ev, t.known()
	opts = t.readers(opts)
	name := title(t)
	if rec.Cached {
		name += " (cached)"
	}
	return s.ServerCreate(ctx, "invokeTool", store.CreateParams{Type: CallType, ID: id, Title: name,
		Content: mustJSON(rec), IdempotencyKey: key}, opts)
}

// startOf is when a call started, as its record says (else when it was
// asked for: def).
func startOf(rec *record, def time.Time) time.Time {
	for _, s := range []string{rec.StartedAt, rec.QueuedAt} {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t
		}
	}
	return def
}

// recordOverhead bounds what a call's record holds besides its args and
// result (names, hashes, stamps, actuals, an error message): the args must
// leave it room within the content cap.
const recordOverhead = 8 << 10

// checkRecordBudget refuses, before anything runs, args that leave a call's
// record no room within the store's content cap: the call could run but
// never be recorded. A result that does not fit beside the args is found
// after the run, and the call is failed result_too_large.
func checkRecordBudget(args []byte) error {
	n := len(args)
	if n > store.MaxContentBytes/6 { // canonical JSON is at most 5.25 times its source
		c, err := canon.Canonical(args)
		if err != nil {
			return nil // not JSON: checkArgs refused it
		}
		n = len(c)
	}
	if limit := store.MaxContentBytes - recordOverhead; n > limit {
		return problem.Invalid(problem.Field("input.args", "maxBytes", fmt.Sprintf(
			"is %d bytes of canonical JSON; a tool call's record keeps its args and its result within the %d-byte content cap, so args may be at most %d bytes: pass large data as a file (its ref) instead",
			n, store.MaxContentBytes, limit), n))
	}
	return nil
}

// Error codes the ledger itself gives a call.
const (
	// CodeWorkerLost: the process running the call stopped beating.
	CodeWorkerLost = "worker_lost"
	// CodeResultTooLarge: the finished record would exceed the content cap.
	CodeResultTooLarge = "result_too_large"
	// CodeFinishFailed: the finished record could not be written otherwise.
	CodeFinishFailed = "finish_failed"
)
