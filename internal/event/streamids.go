package event

import (
	"context"
	"sync"
)

// StreamIDs is how a subscription and a transport whose messages carry an id
// agree on it: Server-Sent Events' `id:` field, which an EventSource sends
// back as Last-Event-ID when it reconnects. The subscription pushes each
// event's cursor as it hands the event over, and the transport pops one for
// each message it writes; a subscription hands over one event at a time and
// each becomes one message, so the two stay in step. Resume is the
// Last-Event-ID the transport was sent: the subscription starts right after
// it, whatever its since or consumer says, so a reconnect misses nothing and
// repeats nothing.
type StreamIDs struct {
	Resume string

	mu sync.Mutex
	q  []string
}

// Push records the cursor of the event handed over next.
func (s *StreamIDs) Push(cursor string) {
	s.mu.Lock()
	s.q = append(s.q, cursor)
	s.mu.Unlock()
}

// Pop is the id of the message written now ("" when none was pushed: the
// answer of a query, an error).
func (s *StreamIDs) Pop() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.q) == 0 {
		return ""
	}
	id := s.q[0]
	s.q = s.q[1:]
	return id
}

type streamIDsKey struct{}

// WithStreamIDs gives ctx's subscriptions s.
func WithStreamIDs(ctx context.Context, s *StreamIDs) context.Context {
	return context.WithValue(ctx, streamIDsKey{}, s)
}

// StreamIDsFrom is ctx's StreamIDs; nil for a transport without ids (a
// websocket).
func StreamIDsFrom(ctx context.Context) *StreamIDs {
	s, _ := ctx.Value(streamIDsKey{}).(*StreamIDs)
	return s
}
