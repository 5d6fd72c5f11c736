package server

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/scidex/substrate/internal/drain"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
)

// stream is one open SSE response. Its request's goroutine writes the
// results; the keepalive timer, the hub's drop (through the resolvers'
// CloseConn), the token's expiry and the shutdown write from elsewhere, so
// every write holds mu, and none happens once the stream is closed: after
// finish, the handler has returned and the ResponseWriter is not ours.
type stream struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	interval time.Duration // of the keepalive
	rid      string
	cancel   context.CancelFunc // ends the operation: the resolvers' context
	ids      *event.StreamIDs   // the cursors of the events a subscription hands over

	mu      sync.Mutex
	closed  bool
	ping    *time.Timer
	expire  *time.Timer
	untrack func()
}

// write writes one message and flushes it, within sseWriteTimeout. It
// reports false when the stream is closed or the write failed (the client is
// gone or stopped reading), and then the stream is closed.
func (st *stream) write(fn func() error) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.writeLocked(fn)
}

func (st *stream) writeLocked(fn func() error) bool {
	if st.closed {
		return false
	}
	_ = st.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	err := fn()
	if err == nil {
		err = st.rc.Flush()
	}
	// No deadline while idle: an exceeded one could not be extended.
	_ = st.rc.SetWriteDeadline(time.Time{})
	if err != nil {
		st.closeLocked()
		return false
	}
	return true
}

func (st *stream) closeLocked() {
	st.closed = true
	st.ping.Stop()
	if st.expire != nil {
		st.expire.Stop()
	}
	st.cancel()
}

// next writes a result as a `next` event.
func (st *stream) next(resp *graphql.Response) bool {
	return st.write(func() error {
		id := ""
		if st.ids != nil {
			id = st.ids.Pop()
		}
		return writeEvent(st.w, id, "next", responseJSON(resp))
	})
}

// complete writes the `complete` event.
func (st *stream) complete() bool {
	return st.write(func() error { return writeEvent(st.w, "", "complete", nil) })
}

// end writes a `next` with err, then `complete`, and closes the stream: the
// operation's context ends, so its resolvers stop and the handler returns.
// It reports false when the stream was closed already.
func (st *stream) end(err *gqlerror.Error) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return false
	}
	st.writeLocked(func() error {
		if e := writeEvent(st.w, "", "next", responseJSON(&graphql.Response{Errors: gqlerror.List{err}})); e != nil {
			return e
		}
		return writeEvent(st.w, "", "complete", nil)
	})
	st.closeLocked()
	return true
}

// endAt ends the stream with err at t.
func (st *stream) endAt(t time.Time, err *gqlerror.Error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.closed {
		st.expire = time.AfterFunc(time.Until(t), func() { st.end(err) })
	}
}

// keepAlive writes a comment line and arms the next one.
func (st *stream) keepAlive() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.writeLocked(func() error { _, err := st.w.Write([]byte(":\n\n")); return err }) {
		st.ping.Reset(st.interval)
	}
}

// finish closes the stream for good; the handler calls it before it returns.
func (st *stream) finish() {
	st.mu.Lock()
	if !st.closed {
		st.closeLocked()
	}
	st.mu.Unlock()
	st.untrack()
}

type streamKey struct{}

func withStream(ctx context.Context, st *stream) context.Context {
	return context.WithValue(ctx, streamKey{}, st)
}

// endStream ends the SSE stream ctx belongs to with reason, as the
// resolvers' CloseConn does for a websocket: the hub dropped its subscriber.
func endStream(ctx context.Context, reason string) bool {
	st, _ := ctx.Value(streamKey{}).(*stream)
	if st == nil {
		return false
	}
	return st.end(streamError(request.From(ctx), problem.RateLimited, "SUBSCRIPTION_DROPPED", reason))
}

// streams are the open SSE streams, for the shutdown, and the subscriptions
// each actor holds open, for its cap.
type streams struct {
	live      drain.Set[*stream]
	mu        sync.Mutex
	perActor  map[string]int
	keepAlive time.Duration
}

// canFlush reports whether w, or a writer it wraps (Unwrap, as
// http.ResponseController follows), can flush.
func canFlush(w http.ResponseWriter) bool {
	for w != nil {
		if _, ok := w.(http.Flusher); ok {
			return true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
	return false
}

var errNoFlush = errors.New("this connection cannot stream (its ResponseWriter does not flush)")

// open starts the event stream: the headers and a first comment, which
// browsers need before they report the stream open. A stream opened while the
// server shuts down is ended at once.
func (t *streams) open(w http.ResponseWriter, rc *request.Context, cancel context.CancelFunc) (*stream, error) {
	st := &stream{w: w, rc: http.NewResponseController(w), cancel: cancel, interval: t.keepAlive}
	if rc != nil {
		st.rid = rc.RequestID
	}
	if !canFlush(w) { // said before the headers, so the refusal is a real 500
		return nil, errNoFlush
	}
	h := w.Header()
	h.Set("Content-Type", mediaEventStream+"; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: pass each event on at once
	w.WriteHeader(http.StatusOK)
	_ = st.rc.Flush()
	st.ping = time.AfterFunc(st.interval, st.keepAlive)
	st.untrack = func() { t.live.Remove(st) }
	st.write(func() error { _, err := w.Write([]byte(":\n\n")); return err })
	if ok, reason := t.live.Add(st); !ok {
		st.end(shutdownError(rc, reason))
	}
	return st, nil
}

// acquire counts one more subscription for actor; false when it holds max.
func (t *streams) acquire(actor string, max int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.perActor == nil {
		t.perActor = map[string]int{}
	}
	if t.perActor[actor] >= max {
		return false
	}
	t.perActor[actor]++
	return true
}

func (t *streams) release(actor string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.perActor[actor]--; t.perActor[actor] <= 0 {
		delete(t.perActor, actor)
	}
}

// shutdown ends every open stream with reason, and those opened later too,
// and waits until their handlers have returned or ctx ends.
func (t *streams) shutdown(ctx context.Context, reason string) (int, error) {
	return t.live.Drain(ctx, reason, func(st *stream) {
		st.end(shutdownError(&request.Context{RequestID: st.rid}, reason))
	})
}

func shutdownError(rc *request.Context, reason string) *gqlerror.Error {
	return streamError(rc, problem.RateLimited, "SHUTTING_DOWN", reason)
}

// CloseEventStreams ends every open SSE stream with a last `next` saying the
// server is shutting down (subscribe again, from the cursor of the last event
// received) and `complete`, and waits until their requests have returned or
// ctx ends. http.Server.Shutdown waits for those requests but cannot end
// them; run this from its RegisterOnShutdown.
func (s *Server) CloseEventStreams(ctx context.Context) (int, error) {
	return s.streams.shutdown(ctx, "the server is shutting down; subscribe again and resume from the cursor of the last event you received (since)")
}
