package resolvers

import (
	"context"
	"strings"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/ref"
)

// The work packet resolvers are thin, as the tool ones are: the dispatcher
// (internal/dispatch/workpacket*.go) runs the lifecycle.

func packetModel(a any) *model.AgentWorkPacket {
	p, _ := a.(*model.AgentWorkPacket)
	return p
}

func completeInput(in model.CompleteWorkPacketInput) dispatch.CompleteInput {
	out := dispatch.CompleteInput{Ref: in.Ref, Status: strings.ToLower(string(in.Status)), ResultRefs: in.ResultRefs, Summary: in.Summary,
		IdempotencyKey: deref(in.IdempotencyKey)}
	if s := in.Spent; s != nil {
		out.Spent = &dispatch.Spent{USD: s.Usd, Tokens: s.Tokens, Steps: s.Steps}
	}
	return out
}

// packetCall is the tool call a packet names, as the caller may read it now.
func (r *Resolver) packetCall(ctx context.Context, obj *model.AgentWorkPacket) (*model.ToolCall, error) {
	s, err := obj.ToolCall()
	if s == nil || err != nil {
		return nil, err
	}
	rf, err := ref.Parse(*s)
	if err != nil || rf.Type != dispatch.CallType {
		return nil, nil
	}
	got, err := r.loaders(ctx).primeRefs(ctx, []ref.Ref{rf.Unpinned()})
	if len(got) == 0 || err != nil {
		return nil, err
	}
	return toolCallModel(got[0]), nil
}
