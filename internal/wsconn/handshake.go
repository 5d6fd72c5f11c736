package wsconn

import (
	"io"
	"time"

	"github.com/gorilla/websocket"
)

// WriteClose sends gqlgen's close frame.
func (c *conn) WriteClose(code int, reason string) error {
	c.closeWith(code, reason)
	return nil
}

// closeWith sends a close frame unless one was sent or received already, and
// reports whether it did. The reading goroutine then discards messages until
// the client's close frame, or closeTimeout.
func (c *conn) closeWith(code int, reason string) bool {
	c.mu.Lock()
	if c.closing || c.peerClosed || c.netClosed {
		c.mu.Unlock()
		return false
	}
	c.closing = true
	c.stopTimers()
	if !c.readFailed {
		_ = c.ws.SetReadDeadline(time.Now().Add(closeTimeout))
	}
	c.mu.Unlock()

	timeout := closeTimeout
	if c.writeTimeout > 0 && c.writeTimeout < timeout {
		timeout = c.writeTimeout
	}
	msg := websocket.FormatCloseMessage(code, clampReason(reason))
	_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(timeout))
	return true
}

// closeAt schedules a 4401 "Token expired" close at t; a zero t cancels it.
func (c *conn) closeAt(t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || c.peerClosed || c.netClosed {
		return false
	}
	if c.expiry != nil {
		c.expiry.Stop()
		c.expiry = nil
	}
	if !t.IsZero() {
		c.expiry = time.AfterFunc(time.Until(t), func() {
			c.closeWith(CloseUnauthorized, "Token expired")
		})
	}
	return true
}

// Close closes the connection. gqlgen calls it right after WriteClose; if the
// client has not answered the close frame yet, the TCP connection stays open
// until it does (or closeTimeout passes), so that the close frame is not lost
// to a reset.
func (c *conn) Close() error {
	c.mu.Lock()
	if c.closeRequested || c.netClosed {
		c.mu.Unlock()
		return nil
	}
	c.closeRequested = true
	c.stopTimers()
	handshake := c.closing && !c.peerClosed
	switch {
	case handshake && c.reading:
		// The reading goroutine waits for the client's close frame and
		// closes the TCP connection in readDone.
		c.mu.Unlock()
		return nil
	case handshake:
		c.reading = true
		raw := c.readFailed
		c.mu.Unlock()
		go c.drain(raw)
		return nil
	}
	c.netClosed = true
	c.mu.Unlock()
	return c.closeNet()
}

// closeNet closes the TCP connection and lets the Implementation forget it.
func (c *conn) closeNet() error {
	err := c.ws.Close()
	if c.untrack != nil {
		c.untrack()
	}
	return err
}

// drain reads until the client's close frame or the deadline closeWith set,
// then closes the TCP connection. When gorilla can no longer read (after a
// read error, such as a message over the read limit) it discards raw bytes
// until the client closes the TCP connection or closeTimeout passes: closing
// with unread data would reset the connection and could destroy the close
// frame before the client reads it.
func (c *conn) drain(raw bool) {
	defer c.readDone()
	if raw {
		nc := c.ws.NetConn()
		_ = nc.SetReadDeadline(time.Now().Add(closeTimeout))
		_, _ = io.Copy(io.Discard, nc)
		return
	}
	for {
		if _, _, err := c.ws.ReadMessage(); err != nil {
			_ = c.readError(err)
			return
		}
	}
}

// readDone ends a read and closes the TCP connection if Close was called
// meanwhile.
func (c *conn) readDone() {
	c.mu.Lock()
	c.reading = false
	shut := c.closeRequested && !c.netClosed
	if shut {
		c.netClosed = true
	}
	c.mu.Unlock()
	if shut {
		_ = c.closeNet()
	}
}
