package wsconn

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"time"
)

// Writes coalesced. Gorilla writes each frame to the connection as it is
// made, one write system call a message, and at a broadcast those calls are
// most of the server's CPU (bench/fanout P4b: 57 %). The connection gorilla
// writes to is a corkConn: while a session's writer delivers what its
// operations have queued, the connection is corked and the frames gather in a
// pooled buffer, sent in one call when the writer is done (or the buffer is
// full). A subscriber that keeps up gets each event in a call of its own, as
// before; one that falls behind catches up in fewer, larger writes, which is
// what lets the server catch up at all. Gorilla sets the write deadline
// before each frame; the last one set applies to the write that sends the
// buffer.

// corkLimit is how much a corked connection gathers before it writes anyway.
const corkLimit = 64 << 10

// corkBuffers are the buffers of corked connections: an idle connection holds
// none.
var corkBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// corkConn is a hijacked connection whose writes can be gathered. Its methods
// are safe for concurrent use (gorilla writes control frames from any
// goroutine). Close is the connection's own, taking no lock: it drops what is
// gathered and interrupts a Write blocked on a client that does not read.
type corkConn struct {
	net.Conn
	mu    sync.Mutex
	depth int     // holds not yet released
	buf   *[]byte // what is gathered, while corked and not empty
	err   error   // the error of a write that went out after Write returned
	// deadline is the write deadline gorilla set while held, applied when
	// what is gathered goes out (gorilla sets one before every frame).
	deadline    time.Time
	hasDeadline bool
}

// SetWriteDeadline sets the deadline of the next write: while held, of the
// write that sends what is gathered.
func (c *corkConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.depth > 0 {
		c.deadline, c.hasDeadline = t, true
		return nil
	}
	return c.Conn.SetWriteDeadline(t)
}

// Write sends p, or gathers it while corked. The error of a gathered write
// comes back from release and from every Write after it.
func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if c.depth == 0 {
		return c.Conn.Write(p)
	}
	if c.buf == nil {
		c.buf = corkBuffers.Get().(*[]byte)
	}
	*c.buf = append(*c.buf, p...)
	if len(*c.buf) >= corkLimit {
		c.flushLocked()
	}
	return len(p), nil
}

// hold starts gathering writes; nil holds nothing.
func (c *corkConn) hold() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.depth++
	c.mu.Unlock()
}

// release ends a hold; the last one sends what was gathered, and its error
// is the first write's that failed.
func (c *corkConn) release() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.depth--; c.depth == 0 {
		c.flushLocked()
	}
	return c.err
}

func (c *corkConn) flushLocked() {
	if c.buf == nil {
		return
	}
	if c.hasDeadline {
		_ = c.Conn.SetWriteDeadline(c.deadline)
		c.hasDeadline = false
	}
	if c.err == nil {
		_, c.err = c.Conn.Write(*c.buf)
	}
	*c.buf = (*c.buf)[:0]
	if cap(*c.buf) <= 4*corkLimit {
		corkBuffers.Put(c.buf)
	}
	c.buf = nil
}

// corking is the ResponseWriter gorilla upgrades: its Hijack hands gorilla a
// corkConn.
type corking struct {
	http.ResponseWriter
	conn *corkConn
}

func (w *corking) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = &corkConn{Conn: nc}
	return w.conn, brw, nil
}

// Unwrap exposes the wrapped writer to http.ResponseController.
func (w *corking) Unwrap() http.ResponseWriter { return w.ResponseWriter }
