package mcpserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name is the runtime's name in a tool's `runtime`.
const Name = "mcp_server"

// errShutdown is the cause of a call's context when Close stops it.
var errShutdown = errors.New("mcpserver: the runtime is closing")

// Runtime calls tools on the operator's MCP servers. It is safe for
// concurrent use; Close ends it.
type Runtime struct {
	opts     Options
	client   *mcp.Client
	conns    map[string]*conn
	http     *http.Transport
	progress progressRegistry

	// base is cancelled by Close, which cancels every running call.
	base context.Context
	stop context.CancelCauseFunc

	mu     sync.Mutex
	closed bool
	// runs counts the calls in Run; Close waits for them before it closes
	// the sessions they use. bg counts the goroutines connecting sessions
	// and closing dropped ones.
	runs      sync.WaitGroup
	bg        sync.WaitGroup
	closeOnce sync.Once
}

// New returns the runtime for opts.Servers. A bad option or server entry is
// an error naming it. No server is started or reached until a call needs it.
func New(opts Options) (*Runtime, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	r := &Runtime{
		opts:  opts,
		conns: make(map[string]*conn, len(opts.Servers)),
		http: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
			ForceAttemptHTTP2:   true,
		},
	}
	r.base, r.stop = context.WithCancelCause(context.Background())
	for name, s := range opts.Servers {
		r.conns[name] = &conn{name: name, srv: s, r: r}
	}
	r.client = mcp.NewClient(&mcp.Implementation{Name: "scidex-substrate", Version: "1"}, &mcp.ClientOptions{
		Logger: opts.Logger,
		// The substrate offers the server nothing (no roots, sampling or
		// elicitation): it only calls tools.
		Capabilities:                &mcp.ClientCapabilities{},
		ProgressNotificationHandler: r.progress.deliver,
	})
	return r, nil
}

// Name implements runtimes.Runtime.
func (r *Runtime) Name() string { return Name }

// Servers lists the configured server names, sorted.
func (r *Runtime) Servers() []string { return sortedNames(r.conns) }

// begin admits a call unless the runtime is closed.
func (r *Runtime) begin() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.runs.Add(1)
	return true
}

// Close ends the runtime: running calls are cancelled (CodeCancelled), then
// every session is closed and every stdio server's process group killed.
// Calls after Close are refused. Close returns when nothing the runtime
// started is left; it is safe to call more than once.
func (r *Runtime) Close() error {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.stop(errShutdown)
		// Running calls end first, then the connects and closes they
		// started; only then is the set of sessions final.
		r.runs.Wait()
		r.bg.Wait()
		var wg sync.WaitGroup
		for _, c := range r.conns {
			if s := c.take(); s != nil {
				wg.Go(s.close)
			}
		}
		wg.Wait()
		r.http.CloseIdleConnections()
	})
	return nil
}
