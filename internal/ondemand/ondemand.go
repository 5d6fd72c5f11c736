// Package ondemand lets the source of a subscription drive its delivery.
//
// gqlgen delivers a subscription by calling its response handler, which waits
// on the channel the resolver returned; a transport that does so keeps one
// goroutine per subscription parked on that channel, and a resolver that
// feeds the channel from a goroutine of its own parks a second one. A
// transport that can write on demand (internal/wsconn's graphql-transport-ws)
// puts a [Stream] in each operation's context instead. A resolver whose
// channel is filled without a goroutine (internal/event's sinks: the hub puts
// each event on the channel itself) claims it and calls Ready after each
// value it puts on the channel; the transport then calls the handler once per
// Ready, on a writer goroutine that exists only while there is something to
// write. An idle subscription costs no goroutine at all.
package ondemand

import "context"

// Stream is the transport's side of one subscription operation.
type Stream interface {
	// Ready says one more value is on the resolver's channel, so that the
	// handler's next call returns without waiting. Calls come in the order
	// the values were sent, from any goroutine; Ready never blocks.
	Ready()
	// End says no value follows those already made Ready: the transport
	// delivers them, then completes the operation (unless it has ended
	// already, e.g. because the client completed it). It never blocks and
	// may be called more than once.
	End()
}

type claimKey struct{}

// claim is what the transport puts in the context: the stream, and a place
// to record that the resolver took it.
type claim struct {
	s       Stream
	claimed bool
}

// WithStream returns ctx carrying s for the resolver to claim; after the
// resolver has run, [Claimed] says whether it did.
func WithStream(ctx context.Context, s Stream) context.Context {
	return context.WithValue(ctx, claimKey{}, &claim{s: s})
}

// Claim takes over the delivery of the operation whose resolver runs in ctx:
// from now on the transport calls the response handler only after Ready (or
// End), never to wait on the channel. It returns nil when the transport waits
// on the channel itself (SSE, legacy graphql-ws, a test's executor); the
// resolver must then feed its channel as usual. Claim only when returning the
// channel: a resolver that claims and then fails leaves the transport waiting
// for a Ready that never comes. The resolver runs on the transport's reading
// goroutine, so Claim needs no lock.
func Claim(ctx context.Context) Stream {
	c, _ := ctx.Value(claimKey{}).(*claim)
	if c == nil {
		return nil
	}
	c.claimed = true
	return c.s
}

// Claimed reports whether the resolver that ran in ctx (a context made by
// WithStream, or derived from one) claimed its stream.
func Claimed(ctx context.Context) bool {
	c, _ := ctx.Value(claimKey{}).(*claim)
	return c != nil && c.claimed
}
