package workpacket

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// ClaimInput is claimWorkPacket's input.
type ClaimInput struct {
	// Ref names the packet; empty claims the oldest claimable one. A pinned
	// ref claims that version: if the packet moved since, the claim is a
	// VERSION_CONFLICT.
	Ref string
	// LeaseSeconds is how long the claim holds (nil: DefaultLease).
	LeaseSeconds *int
	// IdempotencyKey makes a repeated claim answer as the first did.
	IdempotencyKey string `json:"-"`
}

// claimCandidates is how many claimable packets one look at the pool tries
// before looking again.
const claimCandidates = 10

// Claim runs claimWorkPacket: the caller holds the packet until its lease
// lapses. Claiming a packet the caller already holds renews the lease; one
// another agent holds on a live lease is a VERSION_CONFLICT, as is losing a
// race for it; one that ended is a LIFECYCLE_VIOLATION.
func (p *Packets) Claim(ctx context.Context, in ClaimInput) (*store.Artifact, error) {
	rc := request.From(ctx)
	if err := mayWork(rc, "claiming a work packet"); err != nil {
		return nil, err
	}
	first, ctx, err := p.d.Replayed(ctx, "claimWorkPacket", in.IdempotencyKey, in)
	if first != nil || err != nil {
		return first, err
	}
	lease := DefaultLease
	if in.LeaseSeconds != nil {
		if *in.LeaseSeconds < 1 || *in.LeaseSeconds > int(MaxLease/time.Second) {
			return nil, problem.Invalid(problem.Field("input.leaseSeconds", "range",
				fmt.Sprintf("a lease is 1 to %d seconds", int(MaxLease/time.Second)), *in.LeaseSeconds))
		}
		lease = time.Duration(*in.LeaseSeconds) * time.Second
	}
	if in.Ref != "" {
		r, err := packetRef(in.Ref, "input.ref")
		if err != nil {
			return nil, err
		}
		a, err := p.load(ctx, r)
		if err != nil {
			return nil, err
		}
		base := a.ContentHash
		if r.IsPinned() {
			base = r.Hash
		}
		return p.claim(ctx, a, base, lease)
	}
	// The oldest claimable packet; one another agent takes meanwhile is
	// passed over for the next.
	for look := 0; look < 3; look++ {
		l, err := p.Listing(ctx, PacketOpen, new(claimCandidates))
		if err != nil {
			return nil, err
		}
		page, err := p.store.List(ctx, l)
		if err != nil {
			return nil, fmt.Errorf("list claimable work packets: %w", err)
		}
		if len(page.Items) == 0 {
			return nil, problem.New(problem.NotFound, "no work packet is waiting to be claimed")
		}
		for _, a := range page.Items {
			got, err := p.claim(ctx, a, a.ContentHash, lease)
			if p, ok := problem.As(err); ok && (p.Code == problem.VersionConflict || p.Code == problem.LifecycleViolation) {
				continue
			}
			return got, err
		}
	}
	return nil, problem.New(problem.NotFound, "every claimable work packet was claimed by another agent meanwhile; try again")
}

// claim writes the caller's claim on a, based on the version base.
func (p *Packets) claim(ctx context.Context, a *store.Artifact, base string, lease time.Duration) (*store.Artifact, error) {
	rc := request.From(ctx)
	s := stateOf(a)
	switch {
	case s.finished():
		return nil, packetEnded(a, s, PacketClaimed)
	case s.Status != PacketOpen && s.Status != PacketClaimed:
		return nil, problem.New(problem.LifecycleViolation, "%s has status %q, which no claim moves it from", a.Unpinned(), s.Status)
	case s.held(rc.Now) && s.ClaimedBy != rc.Actor.ID:
		return nil, heldBy(a, s, rc.Now)
	}
	if ended, err := p.callEnded(ctx, s); err != nil {
		return nil, err
	} else if ended != "" {
		// The call it was written for is over (cancelled while its packet was
		// being written): nobody waits for the work, so it ends here.
		if err := p.endPacket(ctx, a, "claimWorkPacket"); err != nil {
			return nil, err
		}
		return nil, problem.New(problem.LifecycleViolation, "%s is cancelled: its tool call %s is %s", a.Unpinned(), s.ToolCall, ended)
	}
	set := map[string]any{"status": PacketClaimed, "claimed_by": rc.Actor.ID, "claimed_at": dispatch.Stamp(rc.Now),
		"lease_expires_at": dispatch.SortableStamp(rc.Now.Add(lease)), "lease_seconds": int(lease / time.Second)}
	if s.held(rc.Now) && s.ClaimedAt != "" {
		set["claimed_at"] = s.ClaimedAt // a renewal keeps when the work began
	}
	content, err := withFields(a.Content, set)
	if err != nil {
		return nil, err
	}
	up, opts := dispatch.Keyed(ctx, store.UpdateParams{Ref: a.Unpinned().String(), BaseContentHash: base, Content: content},
		store.ServerOpts{Event: EventPacketClaimed})
	res, err := p.store.ServerUpdate(ctx, "claimWorkPacket", up, opts)
	if err != nil {
		return nil, err
	}
	return res.Artifact, nil
}

// heldBy is the VERSION_CONFLICT of a claim on a packet another agent holds:
// its current version says who and until when, and it may be retried once
// the lease lapses.
func heldBy(a *store.Artifact, s packetState, now time.Time) error {
	p := problem.New(problem.VersionConflict, "%s is claimed by %s until %s; claim another packet, or this one if that lease lapses",
		a.Unpinned(), s.ClaimedBy, s.LeaseExpiresAt)
	p.Refs = []string{a.Ref().String()}
	p.RetryAfter = s.expires().Sub(now)
	p.Extra = &store.Conflict{YourBase: a.ContentHash, Current: a, DiffFromYourBase: json.RawMessage("[]"),
		Hint: store.MergeHint{ConflictingPaths: []string{"/claimed_by"}, SuggestedBaseContentHash: a.ContentHash}}
	return p
}

// packetEnded is the LIFECYCLE_VIOLATION of moving a packet that ended.
func packetEnded(a *store.Artifact, s packetState, to string) error {
	p := problem.New(problem.LifecycleViolation, "%s is already %s; an ended work packet is not claimed or completed again", a.Unpinned(), s.Status)
	p.Refs = []string{a.Ref().String()}
	p.Extra = &store.LifecycleInfo{From: s.Status, To: to, Allowed: []string{}}
	return p
}

// callEnded says how the packet's tool call ended ("" while it waits, and
// for a packet written by hand).
func (p *Packets) callEnded(ctx context.Context, s packetState) (string, error) {
	if s.ToolCall == "" {
		return "", nil
	}
	call, err := p.d.ReadCall(ctx, p.store, "completeWorkPacket", s.ToolCall)
	if err != nil || call == nil || call.Unfinished() {
		return "", err
	}
	return call.Status(), nil
}

// claimant refuses anyone but the agent holding a on a live lease, saying
// what they would need to do (doing: "complete it").
func claimant(a *store.Artifact, s packetState, rc *request.Context, doing string) error {
	switch {
	case s.held(rc.Now) && s.ClaimedBy == rc.Actor.ID:
		return nil
	case s.held(rc.Now):
		return problem.New(problem.PermissionDenied, "%s is claimed by %s until %s: only the claimant may %s", a.Unpinned(), s.ClaimedBy, s.LeaseExpiresAt, doing)
	case s.Status == PacketClaimed && s.ClaimedBy == rc.Actor.ID:
		return problem.New(problem.PermissionDenied, "your claim on %s lapsed at %s; claim it again to %s", a.Unpinned(), s.LeaseExpiresAt, doing)
	default:
		return problem.New(problem.PermissionDenied, "%s is not claimed by you; claim it with claimWorkPacket to %s", a.Unpinned(), doing)
	}
}

// Holds refuses, as Complete would, a caller who does not hold the packet
// named by packet on a live lease (admins pass), and a packet that ended:
// a tool that writes for the claimant before completing the packet for it
// (debate.argue) checks first, so a refused completion writes nothing.
func (p *Packets) Holds(ctx context.Context, packet, doing string) error {
	rc := request.From(ctx)
	if err := mayWork(rc, doing); err != nil {
		return err
	}
	r, err := packetRef(packet, "input.args.packet")
	if err != nil {
		return err
	}
	a, err := p.load(ctx, r)
	if err != nil {
		return err
	}
	s := stateOf(a)
	if s.finished() {
		return packetEnded(a, s, PacketDone)
	}
	if rc.Actor.Has(auth.PermAdmin) {
		return nil
	}
	return claimant(a, s, rc, doing)
}
