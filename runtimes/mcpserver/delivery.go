package mcpserver

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptrace"
	"os"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call is resent on a new session only when it certainly never reached
// the server: a tool may have effects, so a call that may have been
// delivered is failed (the caller decides), never sent twice. What counts
// as "certainly not delivered" depends on the transport:
//
//   - HTTP: the runtime's own HTTP client sees the call's POST (the SDK
//     sends it on the call's context, which carries a delivery). The call
//     may have been delivered once the POST got a connection; it was not if
//     it never did (a refused dial, the SDK refusing a closed session before
//     sending) or if the server answered it 404, the answer the protocol
//     gives for a session it no longer has and runs nothing for. A failure
//     after that (the response stream broke, its resumption found the
//     session gone) is a failure of a call that may have run.
//   - stdio: the SDK refused to send on a session it knew was closed
//     (mcp.ErrConnectionClosed), or the write of the request itself failed
//     (the server's end of the pipe was closed, or ours was) for a request
//     small enough that the pipe takes it whole or not at all (PIPE_BUF). An
//     error on the read side means the request was written.

// delivery records whether one attempt of a call may have reached an HTTP
// server.
type delivery struct {
	mu      sync.Mutex
	reached bool
}

type deliveryKey struct{}

func withDelivery(ctx context.Context, d *delivery) context.Context {
	return context.WithValue(ctx, deliveryKey{}, d)
}

func (d *delivery) set(reached bool) {
	d.mu.Lock()
	d.reached = reached
	d.mu.Unlock()
}

func (d *delivery) mayHaveReached() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reached
}

// deliveryTransport marks the delivery of the call whose POST it carries.
type deliveryTransport struct{ base http.RoundTripper }

func (t deliveryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	d, _ := req.Context().Value(deliveryKey{}).(*delivery)
	if d == nil || req.Method != http.MethodPost {
		return t.base.RoundTrip(req)
	}
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { d.set(true) }}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "" {
		d.set(false) // the server has no such session and ran nothing
	}
	return resp, err
}

// pipeBuf is the largest write a Linux pipe takes atomically (PIPE_BUF).
const pipeBuf = 4096

// requestBound bounds the size of a tools/call request as the SDK encodes
// it: every byte of the arguments and the tool name escaped (at most six
// bytes each, \u003c), and the JSON-RPC envelope, progress token and _meta.
func requestBound(args []byte, toolName string) int {
	return 6*(len(args)+len(toolName)) + 512
}

// notDelivered reports whether a failed attempt certainly never reached the
// server (see above), so that a new session may be given the call.
func notDelivered(transport string, d *delivery, err error, requestBytes int) bool {
	if transport == "http" {
		return !d.mayHaveReached()
	}
	if errors.Is(err, mcp.ErrConnectionClosed) {
		return true
	}
	var pe *fs.PathError
	return requestBytes <= pipeBuf && errors.As(err, &pe) && pe.Op == "write" &&
		(errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed))
}
