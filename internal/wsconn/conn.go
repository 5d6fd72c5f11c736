package wsconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// closeTimeout bounds writing a close frame, and how long the server waits for
// the client's close frame in reply before it drops the TCP connection.
const closeTimeout = 5 * time.Second

// errServerClosed is what NextReader returns once this side has sent a close
// frame. It wraps net.ErrClosed, which gqlgen treats as "closed by us" and does
// not report to its ErrorFunc.
var errServerClosed = fmt.Errorf("wsconn: connection closed by the server: %w", net.ErrClosed)

// conn is a connection: the transport.WebsocketConn handed to gqlgen (legacy
// graphql-ws), or a session's (transport.go). Data is written from several
// goroutines (gqlgen's or the session's, the legacy cap, timers: pings,
// CloseAt), so data writes are serialised by wmu. Close frames go through gorilla's WriteControl,
// which may run concurrently with everything else.
type conn struct {
	ws           *websocket.Conn
	cork         *corkConn // what ws writes to (cork.go); nil in tests that make a conn of their own
	writeTimeout time.Duration
	readLimit    int64           // Options.ReadLimit; when positive gqlgen's is ignored
	legacy       *legacyCap      // nil unless it is legacy graphql-ws with a cap
	ctx          context.Context // the upgrade request's, for TooManyFunc
	maxSubs      int
	tooManyFunc  func(ctx context.Context, max int) *gqlerror.Error

	wmu sync.Mutex

	mu             sync.Mutex
	closing        bool // this side sent a close frame (or gorilla did, for 1009)
	peerClosed     bool // the client's close frame arrived (gorilla answered it)
	readFailed     bool // reading failed for another reason; no more reads
	reading        bool // a goroutine is inside ws.ReadMessage
	closeRequested bool // Close was called
	netClosed      bool // the TCP connection is closed
	expiry         *time.Timer
	pingEvery      time.Duration // Options.PingInterval, on graphql-transport-ws
	pings          *time.Timer   // the next ping (ping.go)
	ponged         bool          // a pong came since the last ping
	// untrack tells the Implementation the TCP connection is closed.
	untrack func()
}

var (
	_ transport.WebsocketConn          = (*conn)(nil)
	_ transport.WebsocketReadLimiter   = (*conn)(nil)
	_ transport.WebsocketReadDeadliner = (*conn)(nil)
)

func newConn(ctx context.Context, ws *websocket.Conn, opts Options, served bool) *conn {
	c := &conn{ws: ws, writeTimeout: opts.WriteTimeout, readLimit: opts.ReadLimit}
	c.ctx, c.maxSubs, c.tooManyFunc = ctx, opts.MaxSubscriptions, opts.TooManyFunc
	if opts.ReadLimit > 0 {
		ws.SetReadLimit(opts.ReadLimit)
	}
	switch {
	case served:
		c.pingEvery = opts.PingInterval
	case opts.MaxSubscriptions > 0:
		c.legacy = newLegacyCap(c, opts.MaxSubscriptions)
	}
	return c
}

// Subprotocol returns the negotiated subprotocol.
func (c *conn) Subprotocol() string { return c.ws.Subprotocol() }

// SetReadLimit applies gqlgen's PayloadReadLimit unless Options.ReadLimit is
// set. gqlgen calls it before the first read.
func (c *conn) SetReadLimit(limit int64) {
	if c.readLimit <= 0 {
		c.ws.SetReadLimit(limit)
	}
}

// SetReadDeadline sets the read deadline gqlgen's ping-pong uses, unless the
// connection is closing and the close handshake owns the deadline.
func (c *conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || c.netClosed {
		return nil
	}
	return c.ws.SetReadDeadline(t)
}

// NextReader returns the next message for gqlgen (legacy graphql-ws: a start
// over the cap is answered here). After this side has sent a close frame,
// messages still arriving are discarded until the client's close frame.
func (c *conn) NextReader() (int, io.Reader, error) {
	c.mu.Lock()
	if c.closing || c.netClosed {
		c.mu.Unlock()
		return 0, nil, errServerClosed
	}
	if c.peerClosed {
		c.mu.Unlock()
		return 0, nil, transport.ErrWebsocketClosed
	}
	c.reading = true
	c.mu.Unlock()
	defer c.readDone()

	for {
		mt, data, err := c.ws.ReadMessage()
		if err != nil {
			return 0, nil, c.readError(err)
		}
		if c.isClosing() {
			continue
		}
		if c.legacy != nil && !c.legacy.inbound(data) {
			continue
		}
		return mt, bytes.NewReader(data), nil
	}
}

// read returns the next message from the client, for a connection this
// package serves. After this side has sent a close frame, messages still
// arriving are discarded until the client's close frame.
func (c *conn) read() ([]byte, error) {
	c.mu.Lock()
	if c.closing || c.netClosed {
		c.mu.Unlock()
		return nil, errServerClosed
	}
	if c.peerClosed {
		c.mu.Unlock()
		return nil, transport.ErrWebsocketClosed
	}
	c.reading = true
	c.mu.Unlock()
	defer c.readDone()
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return nil, c.readError(err)
		}
		if !c.isClosing() {
			return data, nil
		}
	}
}

// tooMany is the error payload of a subscribe over the cap, built when one
// comes (an idle connection need not hold it).
func (c *conn) tooMany() []byte {
	e := &gqlerror.Error{Message: fmt.Sprintf("too many subscriptions on this connection (max %d)", c.maxSubs)}
	if c.tooManyFunc != nil {
		e = c.tooManyFunc(c.ctx, c.maxSubs)
	}
	b, _ := json.Marshal(gqlerror.List{e})
	return b
}

func (c *conn) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// readError records why reading stopped and translates the error for gqlgen,
// which expects transport.ErrWebsocketClosed for a normal close by the client.
func (c *conn) readError(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ce *websocket.CloseError
	switch {
	case errors.As(err, &ce):
		c.peerClosed = true
	case errors.Is(err, websocket.ErrReadLimit):
		c.readFailed = true
		c.closing = true // gorilla has sent 1009
		return err
	default:
		c.readFailed = true
	}
	if c.closing {
		return errServerClosed
	}
	if ce != nil {
		switch ce.Code {
		case websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived:
			return transport.ErrWebsocketClosed
		}
	}
	return err
}

// WriteJSON sends v, a message gqlgen built (legacy graphql-ws).
func (c *conn) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if c.legacy != nil {
		var m struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}
		if json.Unmarshal(b, &m) == nil {
			c.legacy.outbound(m.Type, m.ID)
		}
	}
	return c.writeData(b)
}

// writeData sends one text message. Messages after a close frame are dropped.
func (c *conn) writeData(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	stop := c.closing || c.peerClosed || c.netClosed
	c.mu.Unlock()
	if stop {
		return nil
	}
	if c.writeTimeout > 0 {
		_ = c.ws.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	}
	// Corked, a message is one write system call however gorilla frames it
	// (and none while a session's writer is delivering: see session.write).
	c.cork.hold()
	err := c.ws.WriteMessage(websocket.TextMessage, b)
	if uerr := c.cork.release(); err == nil {
		err = uerr
	}
	if errors.Is(err, websocket.ErrCloseSent) {
		return nil // a close frame overtook this message
	}
	return err
}
