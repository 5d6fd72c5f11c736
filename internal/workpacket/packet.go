package workpacket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/filter"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes/skillcall"
)

// Packets runs the work packet lifecycle (doc.go) over the dispatcher's
// store, finishing the calls that wait on packets through the dispatcher.
type Packets struct {
	d     *dispatch.Dispatcher
	store *store.Store
	log   *slog.Logger
}

// New returns the work packets of d's calls, and makes them the owner of the
// work d's calls wait on (dispatch.Await): a cancelled or lost call's packet
// is cancelled, and d's sweep expires the packets nobody completed.
func New(d *dispatch.Dispatcher) *Packets {
	p := &Packets{d: d, store: d.Store(), log: d.Logger()}
	d.Await(p)
	return p
}

// PacketType is the artifact type of work packets.
const PacketType = skillcall.PacketType

// Statuses of a work packet (agent_work_packet.content.status).
const (
	PacketOpen      = "open"
	PacketClaimed   = "claimed"
	PacketDone      = "done"
	PacketFailed    = "failed"
	PacketCancelled = "cancelled"
)

// Events of the lifecycle: the packet's own writes name what happened to it
// (its call, once the packet is written, emits dispatch.EventWaiting).
const (
	EventPacketClaimed   = "agent_work_packet.claimed"
	EventPacketProgress  = "agent_work_packet.progress"
	EventPacketCompleted = "agent_work_packet.completed"
	EventPacketCancelled = "agent_work_packet.cancelled"
	EventPacketExpired   = "agent_work_packet.expired"
)

// CodePacketExpired is the error of a call whose work packet nobody
// completed in time.
const CodePacketExpired = "packet_expired"

// Lease lengths: the default of a claim, and the longest one may ask for.
// lease_expires_at is written by dispatch.SortableStamp, so comparing two as
// strings (the claimable filter does, in SQL) compares them as times.
const (
	DefaultLease = 10 * time.Minute
	MaxLease     = 24 * time.Hour
)

// packetState is the part of a packet's content the lifecycle reads.
type packetState struct {
	Status         string `json:"status"`
	ClaimedBy      string `json:"claimed_by"`
	ClaimedAt      string `json:"claimed_at"`
	LeaseExpiresAt string `json:"lease_expires_at"`
	LeaseSeconds   int    `json:"lease_seconds"`
	ToolCall       string `json:"tool_call"`
}

func stateOf(a *store.Artifact) packetState {
	var s packetState
	_ = json.Unmarshal(a.Content, &s)
	return s
}

// expires is when the claim lapses (the zero time when unknown: lapsed).
func (s packetState) expires() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s.LeaseExpiresAt)
	return t
}

// held says whether the packet is claimed on a live lease at now.
func (s packetState) held(now time.Time) bool {
	return s.Status == PacketClaimed && s.expires().After(now)
}

func (s packetState) finished() bool {
	return s.Status == PacketDone || s.Status == PacketFailed || s.Status == PacketCancelled
}

// withFields returns content with the given top-level fields set (a nil
// value removes one); the rest of the packet is kept as it was.
func withFields(content json.RawMessage, set map[string]any) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(content, &m); err != nil {
		return nil, fmt.Errorf("decode work packet: %w", err)
	}
	for k, v := range set {
		if v == nil {
			delete(m, k)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode work packet %s: %w", k, err)
		}
		m[k] = b
	}
	return json.Marshal(m)
}

// mayWork refuses callers who may not take on work: claiming, reporting and
// completing need the contributor permission.
func mayWork(rc *request.Context, what string) error {
	if rc == nil || rc.Anonymous || !rc.Actor.Has(auth.PermContributor) {
		return problem.New(problem.PermissionDenied, "%s needs the contributor permission", what)
	}
	return nil
}

// packetRef parses a ref the input names at path: it must be a work packet's.
func packetRef(s, path string) (ref.Ref, error) {
	r, err := ref.Parse(s)
	if err != nil {
		return ref.Ref{}, problem.Invalid(problem.Field(path, "ref", err.Error(), s))
	}
	if r.Type != PacketType {
		return ref.Ref{}, problem.Invalid(problem.Field(path, "ref_type", "names a "+r.Type+", not an "+PacketType, s))
	}
	return r, nil
}

// load reads the current version of the packet r names.
func (p *Packets) load(ctx context.Context, r ref.Ref) (*store.Artifact, error) {
	a, err := p.store.Get(ctx, r.Unpinned())
	if errors.Is(err, store.ErrNotFound) {
		return nil, problem.NotFoundRef(r.Unpinned().String())
	}
	if err != nil {
		return nil, fmt.Errorf("read work packet %s: %w", r.Unpinned(), err)
	}
	return a, nil
}

// Listing is the listing the workPackets query pages through for
// status (open when empty): open means claimable by the caller now, open or
// with a lapsed lease; claimed means held by the caller on a live lease; the
// others list the packets that ended so. Oldest first: work is taken in the
// order it was asked for.
func (p *Packets) Listing(ctx context.Context, status string, first *int) (store.ListParams, error) {
	rc := request.From(ctx)
	if err := mayWork(rc, "listing the work packets you may claim"); err != nil {
		return store.ListParams{}, err
	}
	var f map[string]any
	switch status {
	case "", PacketOpen:
		f = claimable(rc.Now)
	case PacketClaimed:
		f = map[string]any{"content.status": PacketClaimed, "content.claimed_by": rc.Actor.ID,
			"content.lease_expires_at": map[string]any{"gt": dispatch.SortableStamp(rc.Now)}}
	case PacketDone, PacketFailed, PacketCancelled:
		f = map[string]any{"content.status": status}
	default:
		return store.ListParams{}, problem.Invalid(problem.Field("status", "enum", "a work packet is open, claimed, done, failed or cancelled", status))
	}
	e, err := packetFilter(f)
	if err != nil {
		return store.ListParams{}, err
	}
	return store.ListParams{Type: PacketType, Filter: e, OrderBy: store.OrderCreatedAt, First: first}, nil
}

// claimable is the filter of the packets anyone may claim at now: open ones,
// and claimed ones whose lease lapsed (or that never had one).
func claimable(now time.Time) map[string]any {
	return map[string]any{"or": []any{
		map[string]any{"content.status": PacketOpen},
		map[string]any{"and": []any{
			map[string]any{"content.status": PacketClaimed},
			map[string]any{"or": []any{
				map[string]any{"content.lease_expires_at": map[string]any{"lte": dispatch.SortableStamp(now)}},
				map[string]any{"content.lease_expires_at": map[string]any{"exists": false}},
			}},
		}},
	}}
}

func packetFilter(f map[string]any) (*filter.Expr, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encode work packet filter: %w", err)
	}
	return filter.Parse("filter", b)
}
