package wsconn

import (
	"time"
)

// Pings of graphql-transport-ws on a timer (Options.PingInterval). gqlgen's
// PingPongInterval does the same with a goroutine per connection that waits on
// a ticker; an idle subscriber costs that goroutine's stack (bench/fanout), a
// timer costs a few hundred bytes. The behaviour is gqlgen's: from the
// connection_ack on, a ping every interval; the read deadline is twice the
// interval from the ack, moved on at a ping only if a pong came since the one
// before (gqlgen clears the deadline when it reads a pong), so a client that
// stops answering is closed (1000, as gqlgen does) two intervals later.

// startPings arms the ping timer; the session calls it when it acks.
func (c *conn) startPings() {
	if c.pingEvery <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pings != nil || c.closing || c.peerClosed || c.netClosed || c.closeRequested {
		return
	}
	_ = c.ws.SetReadDeadline(time.Now().Add(2 * c.pingEvery))
	c.pings = time.AfterFunc(c.pingEvery, c.ping)
}

// ping sends one ping and re-arms the timer.
func (c *conn) ping() {
	if c.ending() {
		return
	}
	_ = c.writeData(message{Type: msgPing}.encode())
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || c.peerClosed || c.netClosed || c.closeRequested {
		return
	}
	if c.ponged {
		_ = c.ws.SetReadDeadline(time.Now().Add(2 * c.pingEvery))
	}
	c.ponged = false
	c.pings.Reset(c.pingEvery)
}

// pong notes a pong from the client: the connection lives two intervals
// more.
func (c *conn) pong() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ponged = true
	if c.pings != nil && !c.closing && !c.peerClosed && !c.netClosed && !c.closeRequested {
		_ = c.ws.SetReadDeadline(time.Now().Add(2 * c.pingEvery))
	}
}

func (c *conn) ending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing || c.peerClosed || c.netClosed || c.closeRequested
}

// stopTimers stops the expiry and ping timers; c.mu is held.
func (c *conn) stopTimers() {
	if c.expiry != nil {
		c.expiry.Stop()
	}
	if c.pings != nil {
		c.pings.Stop()
	}
}
