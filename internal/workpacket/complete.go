package workpacket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
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
func (p *Packets) Complete(ctx context.Context, in CompleteInput) (*store.Artifact, error) {
	rc := request.From(ctx)
	if err := mayWork(rc, "completing a work packet"); err != nil {
		return nil, err
	}
	first, ctx, err := p.d.Replayed(ctx, "completeWorkPacket", in.IdempotencyKey, in)
	if first != nil || err != nil {
		return first, err
	}
	r, err := packetRef(in.Ref, "input.ref")
	if err != nil {
		return nil, err
	}
	if err := p.checkCompletion(ctx, in); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		a, err := p.load(ctx, r)
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
		out, err := p.complete(ctx, a, s, in)
		if p, ok := problem.As(err); ok && p.Code == problem.VersionConflict && attempt < 2 {
			continue // the packet or its call moved (a renewal, a cancel): look again
		}
		return out, err
	}
}

// checkCompletion checks the input before anything is read: the outcome,
// result refs that parse and name artifacts the caller can read, and
// non-negative costs. Every problem names its path.
func (p *Packets) checkCompletion(ctx context.Context, in CompleteInput) error {
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
		if _, err := p.store.Get(ctx, r); errors.Is(err, store.ErrNotFound) {
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
func (p *Packets) complete(ctx context.Context, a *store.Artifact, s packetState, in CompleteInput) (*store.Artifact, error) {
	rc := request.From(ctx)
	set := map[string]any{"status": in.Status, "result_refs": nonNilRefs(in.ResultRefs), "completed_at": dispatch.Stamp(rc.Now)}
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
		up, opts := dispatch.Keyed(ctx, store.UpdateParams{Ref: a.Unpinned().String(), BaseContentHash: a.ContentHash, Content: content},
			store.ServerOpts{Event: EventPacketCompleted})
		var err error
		res, err = s.ServerUpdate(ctx, "completeWorkPacket", up, opts)
		return err
	}
	call, err := p.d.ReadCall(ctx, p.store, "completeWorkPacket", s.ToolCall)
	if err != nil {
		return nil, err
	}
	if call == nil || !call.Unfinished() {
		// Its call ended meanwhile (cancelled) and keeps its record; the
		// packet still says what was done.
		if err := p.store.InTx(ctx, func(ctx context.Context, tx *store.Tx) error { return packet(ctx, tx.Store()) }); err != nil {
			return nil, err
		}
		return res.Artifact, nil
	}
	if _, err := p.d.Finish(ctx, call, completion(a, in, packet)); err != nil {
		return nil, err
	}
	return res.Artifact, nil
}

// completion is how a completed packet finishes the tool call it was written
// for, if that call still waits (queued, or running: an agent may complete
// the packet before the call that wrote it has recorded that it waits), with
// the packet's write (also) in the same transaction. Succeeded with result
// {result_refs, summary}, stamped as the completing agent's work through the
// skill the packet asked for, or failed with the summary as its error; its
// cost is the tool's plus what the agent spent, debited to the caller.
func completion(packet *store.Artifact, in CompleteInput, also func(ctx context.Context, s *store.Store) error) dispatch.Outcome {
	o := dispatch.Outcome{Op: "completeWorkPacket", At: time.Now(), Charged: true, Also: also}
	if in.Spent != nil {
		o.SpentUSD = in.Spent.USD
	}
	if in.Status == PacketDone {
		result := map[string]any{"result_refs": in.ResultRefs}
		if in.Summary != nil {
			result["summary"] = *in.Summary
		}
		o.Result, _ = json.Marshal(result) // strings only: it encodes
		o.ResultRefs = in.ResultRefs
		var p struct {
			Skill string `json:"skill_name"`
		}
		_ = json.Unmarshal(packet.Content, &p)
		o.Skill = p.Skill
		return o
	}
	msg := "the agent reported that the work failed, without saying why"
	if in.Summary != nil && *in.Summary != "" {
		msg = *in.Summary
	}
	o.Failure = &dispatch.Failure{Code: runtimes.CodeToolError, Message: msg, Details: map[string]any{"work_packet": packet.Unpinned().String()}}
	return o
}

func nonNilRefs(refs []string) []string {
	if refs == nil {
		return []string{}
	}
	return refs
}
