package wsconn

import "context"

// CloseGoingAway is the close code (RFC 6455) a server shutting down sends: a
// client should reconnect, to another replica or after the restart, and resume
// from its cursor.
const CloseGoingAway = 1001

// Shutdown closes every open connection with 1001 and reason, refuses new ones
// the same way, and waits until their TCP connections are closed (each client
// has closeTimeout to answer the close frame) or ctx ends. It returns how many
// connections it closed. im.conns (a drain.Set) knows the open connections: a
// websocket is hijacked from net/http, whose Shutdown neither waits for nor
// closes it.
func (im *Implementation) Shutdown(ctx context.Context, reason string) (int, error) {
	return im.conns.Drain(ctx, reason, func(c *conn) {
		c.closeWith(CloseGoingAway, reason)
		// gqlgen ends the connection's operations and calls Close; a client
		// that never answers is dropped after closeTimeout by the read deadline.
	})
}
