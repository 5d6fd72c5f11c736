package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/scidex/substrate/internal/auth"
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

// complete writes the packet's end and finishes its call, in one transaction.
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
	var (
		res  *store.WriteResult
		call *record
	)
	err = d.store.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		p, opts := keyed(ctx, store.UpdateParams{Ref: a.Unpinned().String(), BaseContentHash: a.ContentHash, Content: content},
			store.ServerOpts{Event: EventPacketCompleted})
		res, err = tx.Store().ServerUpdate(ctx, "completeWorkPacket", p, opts)
		if err != nil {
			return err
		}
		call, err = d.finishWaiting(unkeyed(ctx), tx.Store(), res.Artifact, s, in)
		return err
	})
	if err != nil {
		return nil, err
	}
	if call != nil && call.Status == StatusSucceeded {
		// The agent's results came from the skill the packet asked for,
		// through the skill_call tool: stamped as the completing agent's.
		var p struct {
			Skill string `json:"skill_name"`
		}
		_ = json.Unmarshal(a.Content, &p)
		for _, r := range in.ResultRefs {
			d.store.StampProvenance(ctx, r, schema.ProducedBy{Skill: p.Skill, Tool: call.ToolName})
		}
	}
	return res.Artifact, nil
}

// finishWaiting finishes the tool call a completed packet was written for,
// if it still waits (queued, or running: an agent may complete the packet
// before the call that wrote it has recorded that it waits). A call that
// ended meanwhile (cancelled) keeps its record; the packet still says what
// was done.
func (d *Dispatcher) finishWaiting(ctx context.Context, s *store.Store, packet *store.Artifact, ps packetState, in CompleteInput) (*record, error) {
	call, rec, err := d.waitingCall(ctx, s, ps.ToolCall)
	if err != nil || call == nil || (rec.Status != StatusQueued && rec.Status != StatusRunning) {
		return nil, err
	}
	end := time.Now()
	start := call.CreatedAt
	if t, err := time.Parse(time.RFC3339Nano, rec.StartedAt); err == nil {
		start = t
	}
	t, err := d.load(ctx, rec.ToolName, rec.ToolVersion)
	if _, ok := problem.As(err); err != nil && !ok {
		return nil, err
	}
	cost := 0.0
	if t != nil {
		cost = t.m.cost(end.Sub(start))
	}
	if in.Spent != nil && in.Spent.USD != nil {
		cost = math.Round((cost+*in.Spent.USD)*1e6) / 1e6
	}
	rec.finished(start, end, nil, cost)
	rec.Progress = nil
	ev := EventCompleted
	if in.Status == PacketDone {
		result := map[string]any{"result_refs": in.ResultRefs}
		if in.Summary != nil {
			result["summary"] = *in.Summary
		}
		rec.Status, rec.Result, rec.ResultRef = StatusSucceeded, mustJSON(result), in.ResultRefs[0]
		if t != nil {
			rec.OutputViolations = d.checkOutput(t, rec.Result)
		}
	} else {
		msg := "the agent reported that the work failed, without saying why"
		if in.Summary != nil && *in.Summary != "" {
			msg = *in.Summary
		}
		rec.Status, ev = StatusFailed, EventFailed
		rec.Error = &callError{Code: runtimes.CodeToolError, Message: msg, Details: map[string]any{"work_packet": packet.Unpinned().String()}}
	}
	ctx = request.With(ctx, later(request.From(ctx)))
	res, err := s.ServerUpdate(ctx, "completeWorkPacket", store.UpdateParams{Ref: call.Unpinned().String(), BaseContentHash: call.ContentHash,
		Content: mustJSON(rec)}, store.ServerOpts{Event: ev})
	if err != nil {
		return nil, err
	}
	if rec.CostUSD == nil || *rec.CostUSD <= 0 {
		return rec, nil
	}
	// The debit is the caller's, who asked for the work, not the agent's.
	return rec, s.ServerEvent(ctx, "completeWorkPacket", store.EventParams{Type: EventDebited, Ref: res.Artifact.Ref().String(),
		Audience: []string{call.CreatedBy},
		Payload:  map[string]any{"actor": call.CreatedBy, "amount_usd": *rec.CostUSD, "tool": rec.ToolName, "tool_call": call.Unpinned().String()}})
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
