package event

import (
	"context"

	"github.com/scidex/substrate/internal/auth"
)

// Follow is how the server's own background work follows the log (a replica's
// cancel watch, the MCP catalog and resource notifications): fn gets every
// event sel matches, in log order, from now until ctx ends or the hub stops.
//
// A subscriber that falls behind is dropped by the hub, which never waits for
// anyone (hub.go); for a client that is the client's to resume, but server
// work that silently stopped would be a bug nobody sees. So Follow handles
// what was queued before the drop, then subscribes again from the last event
// it handled: the log replays what it missed, with no gap and no duplicate.
//
// A follower's queue is HubOpts.FollowBuffer long, deeper than a client's.
//
// It subscribes before it returns, so the subscription exists once the
// caller's start is done, and follows on the caller's goroutine (run). fn runs
// on that goroutine; it may be slow, at the price of a replay.
func (h *Hub) Follow(ctx context.Context, sel *Selector, fn func(*Event)) (run func() error) {
	sub := h.Subscribe(ctx, SubscribeOpts{Actor: auth.System(), Selector: sel, buffer: h.opts.FollowBuffer})
	return func() error {
		var last Cursor
		handle := func(e *Event) {
			fn(e)
			last = e.Cursor
			sub.Delivered(e.Cursor)
		}
		for {
			select {
			case <-ctx.Done():
				return nil
			case e := <-sub.C:
				handle(e)
			case <-sub.Done():
				if ctx.Err() != nil || h.stopReason() != "" {
					return nil
				}
				for len(sub.C) > 0 {
					handle(<-sub.C)
				}
				h.opts.Logger.Info("event follower fell behind; replaying from its last event", "types", sel.Types, "reason", sub.Reason())
				o := SubscribeOpts{Actor: auth.System(), Selector: sel, buffer: h.opts.FollowBuffer}
				if last != (Cursor{}) { // the zero cursor would replay the whole log
					since := last
					o.Since = &since
				}
				sub = h.Subscribe(ctx, o)
			}
		}
	}
}
