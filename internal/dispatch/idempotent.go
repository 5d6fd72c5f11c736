package dispatch

import (
	"context"

	"github.com/scidex/substrate/internal/store"
)

// The mutations around a call (cancelToolCall here; claimWorkPacket,
// reportWorkPacketProgress, completeWorkPacket in internal/workpacket) take
// an idempotency key like
// every mutation. Their checks would refuse a replay (a packet completed by
// the very request being replayed is "already done"), so each looks the key
// up first (store.Replayed) and answers a replay with the version the first
// request wrote; a new key is then claimed by the operation's one primary
// write, atomically with it.

type idemKey struct{}

type idem struct {
	key   string
	input any
}

// Replayed is the first answer to a replayed request of op with key, or
// nil; ctx is then the context whose primary write claims the key (Keyed).
func (d *Dispatcher) Replayed(ctx context.Context, op, key string, input any) (*store.Artifact, context.Context, error) {
	if key == "" {
		return nil, ctx, nil
	}
	res, err := d.store.Replayed(ctx, op, key, input)
	if err != nil {
		return nil, ctx, err
	}
	if res != nil {
		return res.Artifact, ctx, nil
	}
	return nil, context.WithValue(ctx, idemKey{}, idem{key, input}), nil
}

// Keyed gives the primary write of an operation its idempotency key: p gets
// the key, opts what the key is bound to (the request, not the content).
func Keyed(ctx context.Context, p store.UpdateParams, opts store.ServerOpts) (store.UpdateParams, store.ServerOpts) {
	if k, ok := ctx.Value(idemKey{}).(idem); ok {
		p.IdempotencyKey, opts.Request = k.key, k.input
	}
	return p, opts
}

// unkeyed drops the key from ctx, for the writes after the primary one.
func unkeyed(ctx context.Context) context.Context { return context.WithValue(ctx, idemKey{}, nil) }
