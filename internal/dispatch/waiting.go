package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/schema"
	"github.com/scidex/substrate/internal/store"
)

// A call may wait on work done outside the dispatcher: its runtime answers
// Pending (the skill_call runtime writes a work packet for an agent), and the
// call waits, queued, until the package owning that work — internal/workpacket
// for packets — finishes it through Finish, the ledger's one transition (end)
// like every other finish, or until it expires (ExpiresAt). The dispatcher
// knows nothing of packets: their owner registers itself (Await) to be told
// when a waiting call is cancelled or lost (Abandon), and to take its step in
// every sweep (Sweep).

// DefaultPacketTTL is how long a call waits on outside work when its tool
// declares no wall time (Opts.PacketTTL).
const DefaultPacketTTL = time.Hour

// EventWaiting is the event of a call that, once its runtime answered
// Pending, waits (status queued) for work outside the dispatcher rather than
// for a worker.
const EventWaiting = "tool_call.waiting"

// Awaiter owns the work calls wait on (internal/workpacket).
type Awaiter interface {
	// Abandon ends the work the call callID, of runtime, may wait on: the
	// call was cancelled, or its process was lost. A failure is the
	// Awaiter's to log: the call ended, whatever becomes of its work.
	Abandon(ctx context.Context, callID, runtime string)
	// Sweep runs in every sweep (Dispatcher.Sweep), after the lost calls are
	// recovered: it fails the calls whose work nobody did in time.
	Sweep(ctx context.Context)
}

// Await makes a the owner of the work calls wait on. Call it before the
// dispatcher runs a call or sweeps.
func (d *Dispatcher) Await(a Awaiter) { d.awaiter = a }

// abandon tells the owner of outside work that call id no longer waits on it.
func (d *Dispatcher) abandon(ctx context.Context, id string, rec *record) {
	if d.awaiter != nil {
		d.awaiter.Abandon(ctx, id, rec.Runtime)
	}
}

// packetTTL is how long a call of t waits for its outside work before it
// fails (its ExpiresAt): the tool's declared wall time, or Opts.PacketTTL.
func (d *Dispatcher) packetTTL(t *tool) time.Duration {
	if t.m.ResourceCaps.WallTimeMin > 0 {
		return t.m.WallTime()
	}
	return d.opts.PacketTTL
}

// Call is a tool call as the owner of its work reads it: the version read,
// and what its record says of where it stands.
type Call struct {
	Artifact *store.Artifact
	rec      *record
}

// Status is the call's status (StatusQueued, …).
func (c *Call) Status() string { return c.rec.Status }

// Unfinished says whether the call still waits: queued, or running (the
// work may be done before the call that asked for it has recorded that it
// waits).
func (c *Call) Unfinished() bool {
	return c.rec.Status == StatusQueued || c.rec.Status == StatusRunning
}

// ExpiresAt is when a waiting call fails if nobody did its work, as
// SortableStamp writes it; "" for a call that does not wait.
func (c *Call) ExpiresAt() string { return c.rec.ExpiresAt }

// ReadCall reads the tool call callRef names through s (a transaction's
// store, inside one), journaled as op; nil when callRef names no tool call
// that exists.
func (d *Dispatcher) ReadCall(ctx context.Context, s *store.Store, op, callRef string) (*Call, error) {
	r, err := ref.Parse(callRef)
	if err != nil || r.Type != CallType {
		return nil, nil
	}
	a, err := s.ServerGet(ctx, op, r.Unpinned())
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("read tool call %s: %w", r.Unpinned(), err)
	}
	var rec record
	if err := json.Unmarshal(a.Content, &rec); err != nil {
		return nil, fmt.Errorf("decode tool call %s: %w", a.ID, err)
	}
	return &Call{Artifact: a, rec: &rec}, nil
}

// Outcome is how the work a call waited on ended, as its owner says it.
type Outcome struct {
	// Op is the operation the finish is journaled as (default invokeTool).
	Op string
	// At is when the work ended: the call's finish.
	At time.Time
	// Failure, when set, fails the call with it. Otherwise the call
	// succeeded with Result; its result_ref is the first of ResultRefs, and
	// each of them is stamped as produced by Skill through the call's tool.
	Failure    *Failure
	Result     json.RawMessage
	ResultRefs []string
	Skill      string
	// Charged charges the call its tool's cost for the time since it
	// started, plus SpentUSD (what the agent doing the work spent); an
	// uncharged call costs nothing (work nobody did).
	Charged  bool
	SpentUSD *float64
	// Also writes, in the finish's transaction and before it, the end of the
	// work itself (the packet completed or expired). Its failure fails the
	// finish as it is, with no fallback record.
	Also func(ctx context.Context, s *store.Store) error
}

// Failure is the error a waiting call fails with.
type Failure struct {
	Code    string
	Message string
	Details map[string]any
}

// Finish finishes c, a call waiting on work, with o: through end, the one
// transition, based on the version of c that was read, so a call that moved
// since (cancelled, finished) is a VERSION_CONFLICT for the caller to look
// again at. Its cost is debited to the call's caller, whoever finishes it.
func (d *Dispatcher) Finish(ctx context.Context, c *Call, o Outcome) (*store.Artifact, error) {
	rec := c.rec
	t, err := d.load(ctx, rec.ToolName, rec.ToolVersion)
	if _, ok := problem.As(err); err != nil && !ok {
		return nil, err
	}
	if err != nil {
		t = named(rec) // gone or no longer runnable: it still finishes
	}
	start := startOf(rec, c.Artifact.CreatedAt)
	cost := 0.0
	if o.Charged {
		cost = t.m.Cost(o.At.Sub(start))
	}
	if o.SpentUSD != nil {
		cost = math.Round((cost+*o.SpentUSD)*1e6) / 1e6
	}
	rec.finished(start, o.At, nil, cost)
	e := ending{t: t, rec: rec, ev: EventCompleted, call: c.Artifact, op: o.Op, strict: true, also: o.Also}
	if o.Failure != nil {
		rec.Status, e.ev = StatusFailed, EventFailed
		rec.Error = &callError{Code: o.Failure.Code, Message: o.Failure.Message, Details: o.Failure.Details}
		return d.end(ctx, e)
	}
	rec.Status, rec.Result = StatusSucceeded, o.Result
	if len(o.ResultRefs) > 0 {
		rec.ResultRef = o.ResultRefs[0]
	}
	if t.art != nil {
		rec.OutputViolations = d.checkOutput(t, rec.Result)
	}
	e.stamps, e.produced = append([]string{}, o.ResultRefs...), schema.ProducedBy{Skill: o.Skill, Tool: rec.ToolName}
	return d.end(ctx, e)
}

// SortableStamp writes t in UTC at a fixed width, so that comparing two as
// text compares them as times: a waiting call's expires_at, and a work
// packet's lease, are compared so in SQL.
func SortableStamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }
