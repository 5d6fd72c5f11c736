package httppost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/runtimes"
)

// patience bounds every wait of these tests: a liveness bound that fails a
// hung runtime, not a timing target.
const patience = 30 * time.Second

// newRuntime returns a runtime whose guard fails the test, before
// connect(2), if it ever lets an address through: every test address is
// either allow-listed (dialled without the hook) or must be refused. A
// broken guard therefore fails a test here and never sends a packet to an
// address no test may reach.
func newRuntime(t *testing.T, opts Options) *Runtime {
	t.Helper()
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r.guard.afterControl = func(network, address string) error {
		t.Errorf("the outbound guard let %s %s through to connect", network, address)
		return fmt.Errorf("test: %s is not to be connected to", address)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func toolFor(rawURL string, extra string) *runtimes.Tool {
	cfg := fmt.Sprintf(`{"url": %q%s}`, rawURL, extra)
	return &runtimes.Tool{Name: "t", Version: "1.0.0", Runtime: Name, Config: json.RawMessage(cfg)}
}

func run(t *testing.T, r *Runtime, tool *runtimes.Tool, args string) (*runtimes.Result, *runtimes.Error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	res, err := r.Run(ctx, &runtimes.Call{Tool: tool, Args: json.RawMessage(args), ID: "test-call"})
	if ctx.Err() != nil {
		t.Fatalf("the call outlived the test's patience (%s)", patience)
	}
	if err == nil {
		return res, nil
	}
	var e *runtimes.Error
	if !errors.As(err, &e) {
		t.Fatalf("Run returned %T %v, want a *runtimes.Error", err, err)
	}
	return res, e
}

func wantCode(t *testing.T, e *runtimes.Error, code string, setup bool) {
	t.Helper()
	if e == nil {
		t.Fatalf("the call succeeded, want %s", code)
	}
	if e.Code != code || e.Setup != setup {
		t.Fatalf("got %s (setup %v): %s; want %s (setup %v)", e.Code, e.Setup, e.Message, code, setup)
	}
}

// hostPort is the host:port of a test server's URL, for Options.Allow.
func hostPort(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// tripwire is a listener on an address the runtime must never connect to.
// It records every connection it accepts; untouched proves none came, with
// no sleep: it connects once itself and waits for that connection, and the
// kernel hands connections over in order, so one made by the runtime
// before would have been accepted first.
type tripwire struct {
	l    net.Listener
	seen chan string
}

func newTripwire(t *testing.T, network, addr string) *tripwire {
	t.Helper()
	tw := tryTripwire(t, network, addr)
	if tw == nil {
		t.Fatalf("cannot listen on %s %s", network, addr)
	}
	return tw
}

// tryTripwire is newTripwire, or nil where the address cannot be listened
// on (no IPv6 loopback on this machine).
func tryTripwire(t *testing.T, network, addr string) *tripwire {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Logf("cannot listen on %s %s here, its cases are skipped: %v", network, addr, err)
		return nil
	}
	tw := &tripwire{l: l, seen: make(chan string, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			tw.seen <- c.RemoteAddr().String()
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = l.Close(); <-done })
	return tw
}

func (tw *tripwire) port() string {
	_, p, _ := net.SplitHostPort(tw.l.Addr().String())
	return p
}

func (tw *tripwire) untouched(t *testing.T) {
	t.Helper()
	c, err := net.DialTimeout(tw.l.Addr().Network(), tw.l.Addr().String(), patience)
	if err != nil {
		t.Fatalf("tripwire sentinel: %v", err)
	}
	defer c.Close()
	mine := c.LocalAddr().String()
	deadline := time.After(patience)
	for {
		select {
		case a := <-tw.seen:
			if a == mine {
				return
			}
			t.Errorf("a connection from %s reached the forbidden listener %s", a, tw.l.Addr())
		case <-deadline:
			t.Fatal("the tripwire never saw its own sentinel connection")
		}
	}
}

// fakeResolver answers from a table, as a DNS server that says whatever a
// tool's author wants would.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[strings.TrimSuffix(host, ".")]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true, Server: "10.9.9.9:53"}
}

// logBuffer is a slog.Logger writing JSON lines, at every level, to a
// buffer a test can search.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// server starts an httptest server with h and returns it with its
// host:port.
func server(t *testing.T, h http.Handler) (*httptest.Server, string) {
	t.Helper()
	return serverWith(t, h, nil)
}

// serverWith is server, with configure run on the http.Server before it
// starts.
func serverWith(t *testing.T, h http.Handler, configure func(*http.Server)) (*httptest.Server, string) {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	if configure != nil {
		configure(s.Config)
	}
	s.Start()
	t.Cleanup(s.Close)
	return s, hostPort(t, s.URL)
}
