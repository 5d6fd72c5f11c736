package workpacket

import (
	"context"
	"time"

	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// ProgressInput is reportWorkPacketProgress's input.
type ProgressInput struct {
	Ref            string
	Fraction       *float64
	Message        string
	IdempotencyKey string `json:"-"`
}

// Progress runs reportWorkPacketProgress: only the claimant, on a live
// lease. The packet records the report and its lease is renewed; the tool
// call gets a tool_call.progress event, so its caller sees the agent's
// progress as it would a running tool's.
func (p *Packets) Progress(ctx context.Context, in ProgressInput) (*store.Artifact, error) {
	rc := request.From(ctx)
	if err := mayWork(rc, "reporting progress on a work packet"); err != nil {
		return nil, err
	}
	first, ctx, err := p.d.Replayed(ctx, "claimWorkPacket", in.IdempotencyKey, in) // progress is written as a claim renewal
	if first != nil || err != nil {
		return first, err
	}
	if in.Fraction != nil && !(*in.Fraction >= 0 && *in.Fraction <= 1) {
		return nil, problem.Invalid(problem.Field("input.fraction", "range", "a fraction of the work is between 0 and 1", *in.Fraction))
	}
	r, err := packetRef(in.Ref, "input.ref")
	if err != nil {
		return nil, err
	}
	a, err := p.load(ctx, r)
	if err != nil {
		return nil, err
	}
	s := stateOf(a)
	if s.finished() {
		return nil, packetEnded(a, s, PacketClaimed)
	}
	if err := claimant(a, s, rc, "report progress on it"); err != nil {
		return nil, err
	}
	lease := time.Duration(s.LeaseSeconds) * time.Second
	if lease <= 0 {
		lease = DefaultLease
	}
	prog := map[string]any{}
	if in.Fraction != nil {
		prog["fraction"] = *in.Fraction
	}
	if in.Message != "" {
		prog["message"] = in.Message
	}
	content, err := withFields(a.Content, map[string]any{"progress": prog, "lease_expires_at": dispatch.SortableStamp(rc.Now.Add(lease))})
	if err != nil {
		return nil, err
	}
	var res *store.WriteResult
	err = p.store.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		up, opts := dispatch.Keyed(ctx, store.UpdateParams{Ref: a.Unpinned().String(), BaseContentHash: a.ContentHash, Content: content},
			store.ServerOpts{Event: EventPacketProgress})
		res, err = tx.Store().ServerUpdate(ctx, "claimWorkPacket", up, opts)
		if err != nil {
			return err
		}
		c, err := p.d.ReadCall(ctx, tx.Store(), "completeWorkPacket", s.ToolCall)
		if err != nil || c == nil {
			return err
		}
		call := c.Artifact
		payload := map[string]any{"ref": call.Ref().String(), "message": in.Message, "workPacket": a.Unpinned().String()}
		if in.Fraction != nil {
			payload["fraction"] = *in.Fraction
		}
		return tx.Store().ServerEvent(ctx, "claimWorkPacket", store.EventParams{Type: dispatch.EventProgress, Ref: call.Ref().String(), Payload: payload})
	})
	if err != nil {
		return nil, err
	}
	return res.Artifact, nil
}
