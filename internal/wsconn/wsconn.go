package wsconn

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/scidex/substrate/internal/drain"
	"github.com/scidex/substrate/internal/origin"
)

// Options configures the websocket implementation returned by [New].
type Options struct {
	// AllowedOrigins are the origins (scheme://host[:port]) allowed to open a
	// websocket besides the server's own; they are compared case-insensitively
	// and a trailing slash is ignored. A request whose Origin host equals its
	// Host is always allowed, and so is a request without an Origin header (a
	// non-browser client).
	AllowedOrigins []string

	// MaxSubscriptions caps the operations active at once on one connection
	// (subscriptions, and queries or mutations sent over the socket, which
	// share the id space). A subscribe (legacy graphql-ws: a start) beyond it
	// is answered with an error message for its id (legacy: and a complete)
	// and not executed; the connection stays open. Zero means no cap.
	MaxSubscriptions int

	// TooManyFunc builds the error that answers a subscribe beyond
	// MaxSubscriptions, from the context of the upgrade request (so that it
	// can carry an error code and the request id); max is the cap. Nil gives
	// an error with a message alone.
	TooManyFunc func(ctx context.Context, max int) *gqlerror.Error

	// ReadLimit caps the size of one message from the client, in bytes; a
	// larger one closes the connection with 1009. When positive it replaces
	// transport.Websocket.PayloadReadLimit; when zero that setting (default
	// 1 MiB) applies.
	ReadLimit int64

	// WriteTimeout bounds each write to the socket; a write that takes longer
	// fails and ends the connection. Zero means messages never time out;
	// writing a close frame always gives up after 5 seconds at most.
	WriteTimeout time.Duration

	// PingInterval, when positive, has the server ping graphql-transport-ws
	// clients this often from a timer, and close a connection whose client
	// has not answered within two intervals (1000), as gqlgen's
	// transport.Websocket.PingPongInterval does with a goroutine per
	// connection. Set one or the other, not both.
	PingInterval time.Duration

	// ReadBufferSize is each connection's read buffer, in bytes; a message
	// larger than it is read in several steps. Zero gives 512 bytes: clients send
	// small messages (connection_init, subscribe, pong) and an idle
	// subscriber holds its buffer all the time. (gorilla's own default is to
	// keep net/http's 4 KB buffer of the upgrade request.)
	ReadBufferSize int
}

// defaultReadBuffer is Options.ReadBufferSize's default.
const defaultReadBuffer = 512

// Implementation is the transport.WebsocketImplementation returned by New.
type Implementation struct {
	opts    Options
	origins origin.Allow // AllowedOrigins
	// writeBuffers are shared by every connection: a connection holds a
	// write buffer only while it writes a message, so an idle subscriber
	// costs 4 KB less (bench/fanout).
	writeBuffers sync.Pool
	// conns are the open connections, for Shutdown.
	conns drain.Set[*conn]
	// responses are shared sources' recent responses (shared.go).
	responses responses
}

// New returns a gqlgen websocket implementation on gorilla/websocket that
// enforces the graphql-transport-ws protocol; see the package documentation.
// Use it as transport.Websocket.Implementation and wrap the gqlgen handler in
// [Middleware].
func New(opts Options) *Implementation {
	return &Implementation{opts: opts, origins: origin.New(opts.AllowedOrigins)}
}

// Accept upgrades the request to a websocket for gqlgen's transport. It
// negotiates one of the subprotocols gqlgen offers but graphql-transport-ws,
// which [Transport] serves itself (gqlgen's falls short of the protocol, see
// the package documentation): a client offering only that one gets no
// subprotocol. It refuses origins that Options does not allow; on failure the
// HTTP error response has been written.
func (im *Implementation) Accept(w http.ResponseWriter, r *http.Request, options transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	c, err := im.accept(w, r, withoutTransportWS(options.Subprotocols), options.ResponseHeader, false)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// accept upgrades the request, negotiating one of subprotocols. served says
// the connection is served by this package ([Transport]), not by gqlgen:
// nothing then stands between the session and the socket.
func (im *Implementation) accept(w http.ResponseWriter, r *http.Request, subprotocols []string, responseHeader http.Header, served bool) (*conn, error) {
	h := holderFrom(r.Context())
	up := websocket.Upgrader{
		Subprotocols:    subprotocols,
		CheckOrigin:     im.origins.Allowed,
		ReadBufferSize:  cmp.Or(im.opts.ReadBufferSize, defaultReadBuffer),
		WriteBufferPool: &im.writeBuffers,
	}
	header := http.Header{}
	for k, vs := range responseHeader {
		switch http.CanonicalHeaderKey(k) {
		case "Sec-Websocket-Protocol", "Sec-Websocket-Extensions":
			continue // gorilla sets these itself and refuses the latter
		}
		header[k] = vs
	}
	cw := &corking{ResponseWriter: w}
	ws, err := up.Upgrade(cw, r, header)
	if err != nil {
		// Gorilla has written the error response or hijacked the connection;
		// the holder tells Middleware's writer to drop what gqlgen writes next.
		if h != nil {
			h.markAnswered()
		}
		return nil, err
	}
	c := newConn(r.Context(), ws, im.opts, served)
	c.cork = cw.conn
	c.untrack = func() { im.conns.Remove(c) }
	if ok, reason := im.conns.Add(c); !ok {
		c.closeWith(CloseGoingAway, reason)
	}
	if h != nil {
		h.set(c)
	}
	return c, nil
}

// withoutTransportWS returns the subprotocols but graphql-transport-ws.
func withoutTransportWS(protocols []string) []string {
	return slices.DeleteFunc(slices.Clone(protocols), func(p string) bool { return p == subprotocolTransportWS })
}
