package resolvers

import (
	"context"
	"errors"
	"strings"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/workpacket"
)

// The work packet resolvers are thin, as the tool ones are: the work
// packets (internal/workpacket) run the lifecycle.

func (r *Resolver) packets() (*workpacket.Packets, error) {
	if r.Packets == nil {
		return nil, errors.New("this server was composed without a tool dispatcher")
	}
	return r.Packets, nil
}

func packetModel(a any) *model.AgentWorkPacket {
	p, _ := a.(*model.AgentWorkPacket)
	return p
}

func completeInput(in model.CompleteWorkPacketInput) workpacket.CompleteInput {
	out := workpacket.CompleteInput{Ref: in.Ref, Status: strings.ToLower(string(in.Status)), ResultRefs: in.ResultRefs, Summary: in.Summary,
		IdempotencyKey: deref(in.IdempotencyKey)}
	if s := in.Spent; s != nil {
		out.Spent = &workpacket.Spent{USD: s.Usd, Tokens: s.Tokens, Steps: s.Steps}
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
