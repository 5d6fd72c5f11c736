package wsconn

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// countingConn records each Write the corkConn makes.
type countingConn struct {
	net.Conn
	mu        sync.Mutex
	writes    [][]byte
	err       error
	deadlines []time.Time
	block     chan struct{} // when set, Write waits until it closes or the conn does
	closed    chan struct{}
}

func newCountingConn() *countingConn { return &countingConn{closed: make(chan struct{})} }

func (c *countingConn) Write(p []byte) (int, error) {
	if c.block != nil {
		select {
		case <-c.block:
		case <-c.closed:
			return 0, net.ErrClosed
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

func (c *countingConn) Close() error { close(c.closed); return nil }

func (c *countingConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadlines = append(c.deadlines, t)
	return nil
}

// Held, writes go out together when the last hold is released; not held, each
// goes out at once.
func TestCorkGathersWrites(t *testing.T) {
	cc := newCountingConn()
	k := &corkConn{Conn: cc}
	if _, err := k.Write([]byte("a")); err != nil || len(cc.writes) != 1 {
		t.Fatalf("an unheld write: %v, %d writes", err, len(cc.writes))
	}
	k.hold()
	k.hold()
	last := time.Now()
	for i, p := range []string{"b", "cc", "ddd"} {
		last = last.Add(time.Duration(i+1) * time.Second)
		_ = k.SetWriteDeadline(last)
		if n, err := k.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("held write %q: %d, %v", p, n, err)
		}
	}
	if err := k.release(); err != nil || len(cc.writes) != 1 {
		t.Fatalf("after the inner release: %v, %d writes", err, len(cc.writes))
	}
	if err := k.release(); err != nil || len(cc.writes) != 2 || string(cc.writes[1]) != "bccddd" {
		t.Fatalf("after the last release: %v, writes %q", err, cc.writes)
	}
	if len(cc.deadlines) != 1 || !cc.deadlines[0].Equal(last) {
		t.Errorf("deadlines set on the connection: %v, want only the last one, %v", cc.deadlines, last)
	}
	if k.buf != nil {
		t.Error("a released connection keeps its buffer")
	}

	// More than corkLimit gathered goes out without waiting for the release.
	k.hold()
	big := bytes.Repeat([]byte("x"), corkLimit)
	_, _ = k.Write(big)
	if len(cc.writes) != 3 {
		t.Errorf("%d writes after %d bytes held, want the buffer sent", len(cc.writes), corkLimit)
	}
	_ = k.release()

	// A failed gathered write is reported by release and every write after.
	cc.err = errors.New("broken pipe")
	k.hold()
	_, _ = k.Write([]byte("lost"))
	if err := k.release(); err == nil {
		t.Error("release hid the failed write")
	}
	if _, err := k.Write([]byte("after")); err == nil {
		t.Error("a write after a failed one succeeded")
	}

	var none *corkConn // tests that make a conn of their own have none
	none.hold()
	if err := none.release(); err != nil {
		t.Error(err)
	}
}

// Close does not wait for a write blocked on a client that does not read.
func TestCorkCloseInterruptsAWrite(t *testing.T) {
	cc := newCountingConn()
	cc.block = make(chan struct{})
	k := &corkConn{Conn: cc}
	done := make(chan error)
	go func() { _, err := k.Write([]byte("stuck")); done <- err }()
	time.AfterFunc(0, func() { _ = k.Close() })
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Errorf("the blocked write returned %v", err)
	}
}
