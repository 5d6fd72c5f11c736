package wsconn

import (
	"context"
	"sync"
)

// CloseGoingAway is the close code (RFC 6455) a server shutting down sends: a
// client should reconnect, to another replica or after the restart, and resume
// from its cursor.
const CloseGoingAway = 1001

// tracker knows the open connections of an Implementation, so that a server
// shutting down can close each with a close frame rather than drop it: a
// websocket is hijacked from net/http, whose Shutdown neither waits for nor
// closes it.
type tracker struct {
	mu      sync.Mutex
	open    map[*conn]struct{}
	closing bool
	empty   chan struct{} // closed once closing and no connection is left
}

// add registers c; it reports false when the server is shutting down, and
// then c is closed at once.
func (t *tracker) add(c *conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return false
	}
	if t.open == nil {
		t.open = map[*conn]struct{}{}
	}
	t.open[c] = struct{}{}
	return true
}

// remove forgets c once its TCP connection is closed.
func (t *tracker) remove(c *conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.open, c)
	if t.closing && len(t.open) == 0 && t.empty != nil {
		close(t.empty)
		t.empty = nil
	}
}

// Shutdown closes every open connection with 1001 and reason, refuses new ones
// the same way, and waits until their TCP connections are closed (each client
// has closeTimeout to answer the close frame) or ctx ends. It returns how many
// connections it closed.
func (im *Implementation) Shutdown(ctx context.Context, reason string) (int, error) {
	t := &im.conns
	t.mu.Lock()
	t.closing = true
	conns := make([]*conn, 0, len(t.open))
	for c := range t.open {
		conns = append(conns, c)
	}
	var empty chan struct{}
	if len(t.open) > 0 {
		empty = make(chan struct{})
		t.empty = empty
	}
	t.mu.Unlock()
	for _, c := range conns {
		c.closeWith(CloseGoingAway, reason)
		// gqlgen ends the connection's operations and calls Close; a client
		// that never answers is dropped after closeTimeout by the read deadline.
	}
	if empty == nil {
		return len(conns), nil
	}
	select {
	case <-empty:
		return len(conns), nil
	case <-ctx.Done():
		return len(conns), ctx.Err()
	}
}
