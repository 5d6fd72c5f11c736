// Package ondemand lets the source of a subscription drive its delivery.
//
// gqlgen delivers a subscription by calling its response handler, which waits
// on the channel the resolver returned; a transport that does so keeps one
// goroutine per subscription parked on that channel, and a resolver that
// feeds the channel from a goroutine of its own parks a second one. A
// transport that can write on demand (internal/wsconn's graphql-transport-ws)
// offers a [Stream] in each operation's context instead. A resolver whose
// values are queued without a goroutine (internal/event's Sink: the hub
// queues each event itself) claims it with its [Source] and calls Ready when
// it has queued something; the transport then, on a writer goroutine that
// exists only while there is something to write, asks the source for the
// next value (Next puts it on the channel) and calls the handler, which
// takes it at once. An idle subscription costs no goroutine at all.
package ondemand

import "context"

// Stream is the transport's side of one subscription operation.
type Stream interface {
	// Ready says the source has queued a value: the transport will call
	// Next (and the handler after each value) until Next reports none. It
	// never blocks, may come from any goroutine, and calls may coalesce.
	Ready()
	// End says nothing follows what is queued: the transport delivers that,
	// then completes the operation (unless it has ended already, e.g.
	// because the client completed it). It never blocks and may be called
	// more than once.
	End()
}

// Source is the resolver's side: its queue.
type Source interface {
	// Next puts the oldest queued value on the channel the resolver
	// returned, which the transport leaves empty between calls, and reports
	// whether there was one. The transport calls it from one goroutine at a
	// time.
	Next() bool
}

type claimKey struct{}

// claim is what the transport puts in the context: the stream, and the
// source once the resolver has claimed it.
type claim struct {
	s   Stream
	src Source
}

// Offer returns ctx offering s to the operation's resolver; after the
// resolver has run, [Claimed] says whether it took it, with what source.
func Offer(ctx context.Context, s Stream) context.Context {
	return context.WithValue(ctx, claimKey{}, &claim{s: s})
}

// Claim takes over the delivery of the operation whose resolver runs in ctx:
// from now on the transport pulls values from src when Ready says there are
// some, and never calls the handler to wait on the channel. It returns nil
// when the transport offers no stream (SSE, legacy graphql-ws, a test's
// executor): the resolver then feeds its channel as usual. Claim only when
// returning the channel: a resolver that claims and then fails leaves the
// transport waiting for a Ready that never comes. The resolver runs on the
// transport's goroutine, before the transport looks at the claim, so Claim
// needs no lock.
func Claim(ctx context.Context, src Source) Stream {
	c, _ := ctx.Value(claimKey{}).(*claim)
	if c == nil {
		return nil
	}
	c.src = src
	return c.s
}

// Claimed is the source the resolver that ran in ctx (a context made by
// Offer, or derived from one) claimed its stream with; nil if it did not.
func Claimed(ctx context.Context) Source {
	c, _ := ctx.Value(claimKey{}).(*claim)
	if c == nil {
		return nil
	}
	return c.src
}

// Shared is a Source whose values may be delivered as the response encoded
// for another operation. Two operations with the same document, operation
// name and variables whose sources name their next value with equal keys
// would produce the same response: the transport may execute and encode it
// once and send those bytes to both (a broadcast to many subscribers of one
// feed costs one execution per event, not one per subscriber). The key must
// therefore say everything the response depends on besides the operation:
// the value, and who may see what (the reader's identity and permissions).
type Shared interface {
	Source
	// Peek is the key of the oldest queued value (comparable: a map key),
	// or false when none is queued.
	Peek() (key any, ok bool)
	// Skip drops the oldest queued value: its response came from another
	// operation's.
	Skip()
}
