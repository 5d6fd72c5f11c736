package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
)

// CompleteInput is completeWorkPacket's input.
type CompleteInput struct {
	Ref string
	// Status is done or failed.
	Status     string
	ResultRefs []string
	Summary    *string
	Spent      *Spent
	// IdempotencyKey makes a repeated completion answer as the first did.
	IdempotencyKey string `json:"-"`
}

// Spent is what a packet's work cost, as the agent reports it.
type Spent struct {
	USD    *float64 `json:"usd,omitempty"`
	Tokens *int     `json:"tokens,omitempty"`
	Steps  *int     `json:"steps,omitempty"`
}

// Complete runs completeWorkPacket: the claimant on a live lease, or an
// admin, ends the packet done (with what it produced) or failed, and the tool
// call waiting on it finishes in the same transaction: succeeded with result
// {result_refs, summary}, or failed with the summary as its error. A packet
// that already ended is a LIFECYCLE_VIOLATION.
func (d *Dispatcher) Complete(ctx context.Context, in CompleteInput) (*store.Artifact, error) {
	rc := request.From(ctx)
	if err := mayWork(rc, "completing a work packet"); err != nil {
		return nil, err
	}
	first, ctx, err := d.replayed(ctx, "completeWorkPacket", in.IdempotencyKey, in)
	if first != nil || err != nil {
		return first, err
	}
	r, err := packetRef(in.Ref, "input.ref")
	if err != nil {
		return nil, err
	}
	if err := d.checkCompletion(ctx, in); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		a, err := d.loadPacket(ctx, r)
		if err != nil {
			return nil, err
		}
		s := stateOf(a)
		if s.finished() {
			return nil, packetEnded(a, s, in.Status)
		}
		if !rc.Actor.Has(auth.PermAdmin) {
			if err := claimant(a, s, rc, "complete it"); err != nil {
				return nil, err
			}
		}
		out, err := d.complete(ctx, a, s, in)
		if p, ok := problem.As(err); ok && p.Code == problem.VersionConflict && attempt < 2 {
			continue // the packet or its call moved (a renewal, a cancel): look again
		}
		return out, err
	}
}

// checkCompletion checks the input before anything is read: the outcome,
// result refs that parse and name artifacts the caller can read, and
// non-negative costs. Every problem names its path.
func (d *Dispatcher) checkCompletion(ctx context.Context, in CompleteInput) error {
	var ps []problem.Detail
	switch in.Status {
	case PacketDone:
		if len(in.ResultRefs) == 0 {
			ps = append(ps, problem.Field("input.resultRefs", "minItems", "a DONE packet names at least one artifact the work produced", []string{}))
		}
	case PacketFailed:
	default:
		ps = append(ps, problem.Field("input.status", "enum", "a work packet is completed DONE or FAILED", in.Status))
	}
	for i, s := range in.ResultRefs {
		path := fmt.Sprintf("input.resultRefs.%d", i)
		r, err := ref.Parse(s)
		if err != nil {
			ps = append(ps, problem.Field(path, "ref", err.Error(), s))
			continue
		}
		if _, err := d.store.Get(ctx, r); errors.Is(err, store.ErrNotFound) {
			ps = append(ps, problem.Field(path, "exists", "no artifact "+s+" (or you may not read it): create the result before completing the packet", s))
		} else if err != nil {
			return fmt.Errorf("read result %s: %w", s, err)
		}
	}
	if sp := in.Spent; sp != nil {
		if sp.USD != nil && !(*sp.USD >= 0) {
			ps = append(ps, problem.Field("input.spent.usd", "minimum", "dollars spent are at least 0", *sp.USD))
		}
		if sp.Tokens != nil && *sp.Tokens < 0 {
			ps = append(ps, problem.Field("input.spent.tokens", "minimum", "tokens used are at least 0", *sp.Tokens))
		}
		if sp.Steps != nil && *sp.Steps < 0 {
			ps = append(ps, problem.Field("input.spent.steps", "minimum", "steps taken are at least 0", *sp.Steps))
		}
	}
	if len(ps) > 0 {
		return problem.Invalid(ps...)
	}
	return nil
}

// complete writes the packet's end and finishes its call, in one
// transaction (the ledger's transition, end, with the packet's write as the
// finish's other write).
func (d *Dispatcher) complete(ctx context.Context, a *store.Artifact, s packetState, in CompleteInput) (*store.Artifact, error) {
	rc := request.From(ctx)
	set := map[string]any{"status": in.Status, "result_refs": nonNilRefs(in.ResultRefs), "completed_at": stamp(rc.Now)}
	if len(in.ResultRefs) > 0 {
		set["result_ref"] = in.ResultRefs[0]
	}
	if in.Summary != nil {
		set["result_summary"] = *in.Summary
	}
	if in.Spent != nil {
		set["spent"] = in.Spent
	}
	content, err := withFields(a.Content, set)
	if err != nil {
		return nil, err
	}
	var res *store.WriteResult
	packet := func(ctx context.Context, s *store.Store) error {
		p, opts := keyed(ctx, store.UpdateParams{Ref: a.Unpinned().String(), BaseContentHash: a.ContentHash, Content: content},
			store.ServerOpts{Event: EventPacketCompleted})
		var err error
		res, err = s.ServerUpdate(ctx, "completeWorkPacket", p, opts)
		return err
	}
	e, err := d.completion(ctx, a, s, in)
	if err != nil {
		return nil, err
	}
	if e == nil {
		// Its call ended meanwhile (cancelled) and keeps its record; the
		// packet still says what was done.
		if err := d.store.InTx(ctx, func(ctx context.Context, tx *store.Tx) error { return packet(ctx, tx.Store()) }); err != nil {
			return nil, err
		}
		return res.Artifact, nil
	}
	e.also = packet
	if _, err := d.end(ctx, *e); err != nil {
		return nil, err
	}
	return res.Artifact, nil
}

// completion is the ending of the tool call a completed packet was written
// for, if it still waits (queued, or running: an agent may complete the
// packet before the call that wrote it has recorded that it waits); nil when
// it ended meanwhile. Succeeded with result {result_refs, summary}, stamped as
// the completing agent's work through the skill the packet asked for, or
// failed with the summary as its error; its cost is the tool's plus what the
// agent spent, debited to the caller.
func (d *Dispatcher) completion(ctx context.Context, packet *store.Artifact, ps packetState, in CompleteInput) (*ending, error) {
	call, rec, err := d.waitingCall(ctx, d.store, ps.ToolCall)
	if err != nil || call == nil || (rec.Status != StatusQueued && rec.Status != StatusRunning) {
		return nil, err
	}
	end := time.Now()
	start := startOf(rec, call.CreatedAt)
	t, err := d.load(ctx, rec.ToolName, rec.ToolVersion)
	if _, ok := problem.As(err); err != nil && !ok {
		return nil, err
	}
	cost := 0.0
	if err != nil {
		t = named(rec)
	} else {
		cost = t.m.Cost(end.Sub(start))
	}
	if in.Spent != nil && in.Spent.USD != nil {
		cost = math.Round((cost+*in.Spent.USD)*1e6) / 1e6
	}
	rec.finished(start, end, nil, cost)
	e := &ending{t: t, rec: rec, ev: EventCompleted, call: call, op: "completeWorkPacket", strict: true}
	if in.Status == PacketDone {
		result := map[string]any{"result_refs": in.ResultRefs}
		if in.Summary != nil {
			result["summary"] = *in.Summary
		}
		rec.Status, rec.Result, rec.ResultRef = StatusSucceeded, mustJSON(result), in.ResultRefs[0]
		if t.art != nil {
			rec.OutputViolations = d.checkOutput(t, rec.Result)
		}
		var p struct {
			Skill string `json:"skill_name"`
		}
		_ = json.Unmarshal(packet.Content, &p)
		e.stamps, e.produced = nonNilRefs(in.ResultRefs), schema.ProducedBy{Skill: p.Skill, Tool: rec.ToolName}
		return e, nil
	}
	msg := "the agent reported that the work failed, without saying why"
	if in.Summary != nil && *in.Summary != "" {
		msg = *in.Summary
	}
	rec.Status, e.ev = StatusFailed, EventFailed
	rec.Error = &callError{Code: runtimes.CodeToolError, Message: msg, Details: map[string]any{"work_packet": packet.Unpinned().String()}}
	return e, nil
}

// ExpirePackets fails the calls waiting on a work packet nobody completed
// in time (packet_expired): an open packet past its call's expires_at, or a
// claimed one whose lease lapsed after it (a live lease is let run out). The
// packet ends failed in the same transaction. The sweep (Sweep) runs it with
// RecoverLost; it returns how many calls it expired.
func (d *Dispatcher) ExpirePackets(ctx context.Context) (int, error) {
	now := time.Now()
	ids, err := dbsqlc.New(d.store.Pool()).ToolCallsExpired(ctx, leaseStamp(now))
	if err != nil {
		return 0, fmt.Errorf("find expired work packets: %w", err)
	}
	n := 0
	for _, id := range ids {
		ok, err := d.expire(request.With(ctx, request.System("tool-expire", now)), id, now)
		if err != nil {
			d.log.Warn("expire a work packet", "call", id, "err", err)
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// expire fails one waiting call packet_expired, with its packet.
func (d *Dispatcher) expire(ctx context.Context, id string, now time.Time) (bool, error) {
	call, rec, err := d.loadCall(ctx, id)
	if call == nil || err != nil || rec.Status != StatusQueued || rec.ExpiresAt == "" || rec.ExpiresAt > leaseStamp(now) {
		return false, err
	}
	ctx = asCaller(ctx, call, "tool-expire")
	var also func(ctx context.Context, s *store.Store) error
	// The packet's id is the call's (runtimes/skillcall).
	a, err := d.store.Get(ctx, ref.Ref{Type: PacketType, ID: id})
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return false, fmt.Errorf("read work packet %s: %w", id, err)
	case stateOf(a).held(now):
		return false, nil // a live lease runs out first
	case !stateOf(a).finished():
		content, err := withFields(a.Content, map[string]any{"status": PacketFailed, "failure": CodePacketExpired})
		if err != nil {
			return false, err
		}
		also = func(ctx context.Context, s *store.Store) error {
			// Written as a completion: only claims and completions move a packet.
			_, err := s.ServerUpdate(ctx, "completeWorkPacket", store.UpdateParams{Ref: a.Unpinned().String(), BaseContentHash: a.ContentHash,
				Content: content}, store.ServerOpts{Event: EventPacketExpired})
			return err
		}
	}
	t, err := d.load(ctx, rec.ToolName, rec.ToolVersion)
	if _, ok := problem.As(err); err != nil && !ok {
		return false, err
	}
	if err != nil {
		t = named(rec)
	}
	rec.Status = StatusFailed
	rec.Error = &callError{Code: CodePacketExpired, Message: fmt.Sprintf(
		"nobody completed the call's work packet by %s (the tool's wall time, or the server's packet TTL, after it was written)", rec.ExpiresAt),
		Details: map[string]any{"work_packet": PacketType + ":" + id}}
	rec.finished(startOf(rec, now), now, nil, 0)
	if _, err := d.end(ctx, ending{t: t, rec: rec, ev: EventFailed, call: call, strict: true, also: also}); err != nil {
		if p, ok := problem.As(err); ok && p.Code == problem.VersionConflict {
			return false, nil // claimed, completed or cancelled meanwhile
		}
		return false, err
	}
	return true, nil
}

// cancelPacket ends the work packet of a skill_call call that was cancelled:
// an agent claiming or completing it afterwards is told it is cancelled. A
// failure is logged: the call is cancelled whatever becomes of its packet
// (a claim finds the call cancelled and ends the packet then).
func (d *Dispatcher) cancelPacket(ctx context.Context, callID string, rec *record) {
	if rec.Runtime != "skill_call" {
		return
	}
	// The packet's id is the call's (runtimes/skillcall).
	for attempt := 0; attempt < 3; attempt++ {
		a, err := d.store.Get(ctx, ref.Ref{Type: PacketType, ID: callID})
		if errors.Is(err, store.ErrNotFound) {
			return // not written yet, or never
		}
		if err != nil {
			d.log.Warn("cancel work packet", "call", callID, "err", err)
			return
		}
		if stateOf(a).finished() {
			return
		}
		err = d.endPacket(ctx, a, "cancelToolCall")
		if p, ok := problem.As(err); ok && p.Code == problem.VersionConflict {
			continue
		}
		if err != nil {
			d.log.Warn("cancel work packet", "call", callID, "packet", a.ID, "err", err)
		}
		return
	}
}

// endPacket marks a packet cancelled through op.
func (d *Dispatcher) endPacket(ctx context.Context, a *store.Artifact, op string) error {
	content, err := withFields(a.Content, map[string]any{"status": PacketCancelled})
	if err != nil {
		return err
	}
	_, err = d.store.ServerUpdate(ctx, op, store.UpdateParams{Ref: a.Unpinned().String(), BaseContentHash: a.ContentHash,
		Content: content}, store.ServerOpts{Event: EventPacketCancelled})
	return err
}

func nonNilRefs(refs []string) []string {
	if refs == nil {
		return []string{}
	}
	return refs
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
