package wsconn

import (
	"bufio"
	"context"
	"log"
	"net"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/gorilla/websocket"
)

// holderKey is the context key of the *holder that Middleware puts in an
// upgrade request's context.
type holderKey struct{}

// holder is created by Middleware before the upgrade and filled by Accept, so
// that contexts gqlgen derives from the request can reach the connection.
type holder struct {
	mu       sync.Mutex
	c        *conn
	answered bool // Accept failed and the HTTP response has been written
	// hijacked is closed when gorilla has taken the TCP connection over.
	hijacked chan struct{}
	once     sync.Once
	// cancel ends the connection's context; detached says a goroutine of
	// the transport's own took it over (and calls it when done).
	cancel   context.CancelFunc
	detached bool
}

// detach hands the connection's context over to a goroutine the transport
// starts for the rest of the connection, so that the goroutine that served
// the upgrade (every handler's frame on its stack) can return. It returns
// the cancel func the new goroutine must call when it is done, or nil
// without Middleware.
func detach(ctx context.Context) context.CancelFunc {
	h := holderFrom(ctx)
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.detached = true
	return h.cancel
}

func (h *holder) isDetached() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.detached
}

func (h *holder) set(c *conn) {
	h.mu.Lock()
	h.c = c
	h.mu.Unlock()
}

func (h *holder) conn() *conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c
}

func (h *holder) markAnswered() {
	h.mu.Lock()
	h.answered = true
	h.mu.Unlock()
}

func (h *holder) isAnswered() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.answered
}

func holderFrom(ctx context.Context) *holder {
	h, _ := ctx.Value(holderKey{}).(*holder)
	return h
}

// connFrom returns the connection accepted for the request ctx derives from,
// or nil.
func connFrom(ctx context.Context) *conn {
	if ctx == nil {
		return nil
	}
	if h := holderFrom(ctx); h != nil {
		return h.conn()
	}
	return nil
}

// Middleware prepares websocket upgrade requests for this package: it puts a
// holder in the request context, which Accept fills with the connection so
// that [CloseConn] and [CloseAt] work from the InitFunc's and the resolvers'
// contexts, and it keeps gqlgen from writing a second response after a refused
// upgrade (which gorilla has already answered, for example with 403). Wrap the
// gqlgen handler.Server in it:
//
//	mux.Handle("/graphql", wsconn.Middleware(srv))
//
// Requests without an Upgrade header pass through untouched.
//
// An upgrade request is served on a goroutine of its own, and Middleware
// returns to net/http as soon as the connection is hijacked: net/http then
// lets go of what it holds for the request (its connection state, its 4 KB
// write buffer, the goroutine that served it with every handler's frame on
// its stack), which an idle websocket would otherwise keep for its whole life
// (bench/fanout). The request's context therefore does not end when
// Middleware returns: it ends when the upgrade fails, when the client goes
// before the upgrade, or when gqlgen is done with the connection. Handlers
// before Middleware see their ServeHTTP return while the websocket lives on.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "" { // gqlgen's test for its websocket transport
			next.ServeHTTP(w, r)
			return
		}
		h := &holder{hijacked: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
		h.cancel = cancel
		stop := context.AfterFunc(r.Context(), cancel) // until the hijack, the request's end is the connection's
		r = r.WithContext(context.WithValue(ctx, holderKey{}, h))
		done := make(chan struct{})
		// The goroutine is handed the upgradeWriter alone, never w: once the
		// upgradeWriter has let go of w at the hijack, nothing there holds
		// net/http's response (and through it the connection's buffers).
		go serveUpgrade(next, &upgradeWriter{ResponseWriter: w, h: h}, r, done, cancel)
		select {
		case <-done:
		case <-h.hijacked:
		}
		// Hijacked, the connection outlives the request (with a transport
		// that detaches, serveUpgrade may even be done already); not
		// hijacked, serveUpgrade has ended its context itself.
		stop()
	})
}

// serveUpgrade serves an upgrade request on its own goroutine. A panic is
// recovered as net/http would have (logged, the connection closed, the
// process spared): the handler no longer runs on net/http's goroutine.
func serveUpgrade(next http.Handler, w *upgradeWriter, r *http.Request, done chan<- struct{}, cancel context.CancelFunc) {
	defer close(done)
	defer func() {
		if !w.h.isDetached() {
			cancel()
		}
	}()
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v != http.ErrAbortHandler {
			log.Printf("wsconn: panic serving %s: %v\n%s", r.RemoteAddr, v, debug.Stack())
		}
		if c := w.h.conn(); c != nil {
			c.closeWith(websocket.CloseInternalServerErr, "internal server error")
			_ = c.Close()
		} else if nc, _, err := http.NewResponseController(w.ResponseWriter).Hijack(); err == nil {
			_ = nc.Close() // hijacked, but the panic came before gorilla had the connection
		}
	}()
	next.ServeHTTP(w, r)
}

// upgradeWriter passes the response through, hijacking included, until Accept
// reports that it has answered the request; later writes are dropped.
type upgradeWriter struct {
	http.ResponseWriter
	h *holder
}

func (w *upgradeWriter) WriteHeader(status int) {
	if !w.h.isAnswered() {
		w.ResponseWriter.WriteHeader(status)
	}
}

func (w *upgradeWriter) Write(p []byte) (int, error) {
	if w.h.isAnswered() {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Hijack lets gorilla take over the connection, and Middleware return. The
// response is of no more use after it (net/http refuses writes to a hijacked
// one): the upgradeWriter forgets it, since gqlgen holds the upgradeWriter as
// long as the websocket lives.
func (w *upgradeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.ResponseWriter = hijacked{}
		w.h.once.Do(func() { close(w.h.hijacked) })
	}
	return nc, brw, err
}

// hijacked stands for a response after its connection was hijacked.
type hijacked struct{}

func (hijacked) Header() http.Header       { return http.Header{} }
func (hijacked) Write([]byte) (int, error) { return 0, http.ErrHijacked }
func (hijacked) WriteHeader(int)           {}

// Unwrap exposes the wrapped writer to http.ResponseController.
func (w *upgradeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
