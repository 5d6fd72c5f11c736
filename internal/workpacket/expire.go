package workpacket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// A packet ends without an agent's completion in two ways, both told by
// the dispatcher (dispatch.Awaiter): its call was cancelled or lost
// (Abandon: the packet is cancelled), or nobody completed it in time (Sweep:
// the call fails packet_expired and the packet fails with it).

// Sweep is the packets' step of the dispatcher's sweep: it expires the
// packets nobody completed in time (Expire), and logs what it did.
func (p *Packets) Sweep(ctx context.Context) {
	if n, err := p.Expire(ctx); err != nil && ctx.Err() == nil {
		p.log.Warn("expire work packets", "err", err)
	} else if n > 0 {
		p.log.Info("failed tool calls whose work packet expired", "count", n)
	}
}

// Expire fails the calls waiting on a work packet nobody completed in time
// (packet_expired): an open packet past its call's expires_at, or a claimed
// one whose lease lapsed after it (a live lease is let run out). The packet
// ends failed in the same transaction. It returns how many calls it expired.
func (p *Packets) Expire(ctx context.Context) (int, error) {
	now := time.Now()
	// The waiting calls whose expires_at passed, read through the index of
	// live calls (migration 0016).
	ids, err := dbsqlc.New(p.store.Pool()).ToolCallsExpired(ctx, dispatch.SortableStamp(now))
	if err != nil {
		return 0, fmt.Errorf("find expired work packets: %w", err)
	}
	n := 0
	for _, id := range ids {
		ok, err := p.expire(request.With(ctx, request.System("tool-expire", now)), id, now)
		if err != nil {
			p.log.Warn("expire a work packet", "call", id, "err", err)
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// expire fails one waiting call packet_expired, with its packet.
func (p *Packets) expire(ctx context.Context, id string, now time.Time) (bool, error) {
	call, err := p.d.ReadCall(ctx, p.store, "invokeTool", dispatch.CallType+":"+id)
	if call == nil || err != nil || call.Status() != dispatch.StatusQueued || call.ExpiresAt() == "" || call.ExpiresAt() > dispatch.SortableStamp(now) {
		return false, err
	}
	ctx = dispatch.AsCaller(ctx, call.Artifact, "tool-expire")
	var also func(ctx context.Context, s *store.Store) error
	// The packet's id is the call's (runtimes/skillcall).
	a, err := p.store.Get(ctx, ref.Ref{Type: PacketType, ID: id})
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
	_, err = p.d.Finish(ctx, call, dispatch.Outcome{At: now, Also: also, Failure: &dispatch.Failure{Code: CodePacketExpired, Message: fmt.Sprintf(
		"nobody completed the call's work packet by %s (the tool's wall time, or the server's packet TTL, after it was written)", call.ExpiresAt()),
		Details: map[string]any{"work_packet": PacketType + ":" + id}}})
	if pr, ok := problem.As(err); ok && pr.Code == problem.VersionConflict {
		return false, nil // claimed, completed or cancelled meanwhile
	}
	return err == nil, err
}

// Abandon ends the work packet of a skill_call call that was cancelled or
// lost (dispatch.Awaiter): an agent claiming or completing it afterwards is
// told it is cancelled. A failure is logged: the call ended whatever becomes
// of its packet (a claim finds the call ended and ends the packet then).
func (p *Packets) Abandon(ctx context.Context, callID, runtime string) {
	if runtime != "skill_call" {
		return
	}
	// The packet's id is the call's (runtimes/skillcall).
	for attempt := 0; attempt < 3; attempt++ {
		a, err := p.store.Get(ctx, ref.Ref{Type: PacketType, ID: callID})
		if errors.Is(err, store.ErrNotFound) {
			return // not written yet, or never
		}
		if err != nil {
			p.log.Warn("cancel work packet", "call", callID, "err", err)
			return
		}
		if stateOf(a).finished() {
			return
		}
		err = p.endPacket(ctx, a, "cancelToolCall")
		if pr, ok := problem.As(err); ok && pr.Code == problem.VersionConflict {
			continue
		}
		if err != nil {
			p.log.Warn("cancel work packet", "call", callID, "packet", a.ID, "err", err)
		}
		return
	}
}

// endPacket marks a packet cancelled through op.
func (p *Packets) endPacket(ctx context.Context, a *store.Artifact, op string) error {
	content, err := withFields(a.Content, map[string]any{"status": PacketCancelled})
	if err != nil {
		return err
	}
	_, err = p.store.ServerUpdate(ctx, op, store.UpdateParams{Ref: a.Unpinned().String(), BaseContentHash: a.ContentHash,
		Content: content}, store.ServerOpts{Event: EventPacketCancelled})
	return err
}
