package mcpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/mcpserver"
	"github.com/scidex/substrate/runtimes/runtimetest"
)

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "stdio" {
		serveStdio()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// patience bounds waits for things that must happen (a liveness bound, not a
// timing target).
const patience = 30 * time.Second

// stdioServer is the test server as a child process: this test binary
// re-executed. starts is the file each start appends its pid to.
func stdioServer(t *testing.T) (srv mcpserver.Server, starts string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	starts = filepath.Join(t.TempDir(), "starts")
	return mcpserver.Server{
		Command: []string{exe, "-test.run=^$"},
		// A binary built with -race sleeps a second at exit unless told not to.
		Env: map[string]string{serverEnv: "stdio", startsEnv: starts, "GORACE": "atexit_sleep_ms=0"},
	}, starts
}

// httpServer is the test server behind the SDK's streamable HTTP handler.
// Swapping the handler (restart) makes the server forget its sessions, as a
// restarted server does.
type httpServer struct {
	*httptest.Server
	st      *serverState
	handler atomic.Pointer[mcp.StreamableHTTPHandler]
	// lastTeam is the X-Team header of the last request.
	lastTeam atomic.Value
}

func newHTTPServer(t testing.TB) *httpServer {
	t.Helper()
	h := &httpServer{st: newServerState()}
	h.restart()
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.lastTeam.Store(r.Header.Get("X-Team"))
		h.handler.Load().ServeHTTP(w, r)
	}))
	// A sleep whose cancellation the SDK lost to the session's close would
	// hold Close forever: end them all first.
	t.Cleanup(func() { h.st.releaseSleeps(); h.Close() })
	return h
}

func (h *httpServer) restart() {
	srv := newTestServer(h.st)
	h.handler.Store(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
}

func newRuntime(t *testing.T, servers map[string]mcpserver.Server) *mcpserver.Runtime {
	t.Helper()
	rt, err := mcpserver.New(mcpserver.Options{
		Servers:        servers,
		TerminateGrace: 500 * time.Millisecond,
		Logger:         slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Logf("%s", p); return len(p), nil }

func tool(server, name string) *runtimes.Tool {
	cfg, _ := json.Marshal(map[string]string{"server": server, "tool_name": name})
	return &runtimes.Tool{Name: "test." + name, Version: "1.0.0", Runtime: mcpserver.Name, Config: cfg}
}

func fixture(rt runtimes.Runtime, server string) runtimetest.Fixture {
	return runtimetest.Fixture{Runtime: rt, Echo: tool(server, "echo"), BadOutput: tool(server, "bad"),
		Sleep: tool(server, "sleep"), Huge: tool(server, "huge")}
}

func TestConformanceStdio(t *testing.T) {
	srv, _ := stdioServer(t)
	rt := newRuntime(t, map[string]mcpserver.Server{"test": srv})
	runtimetest.Run(t, fixture(rt, "test"))
}

func TestConformanceHTTP(t *testing.T) {
	h := newHTTPServer(t)
	rt := newRuntime(t, map[string]mcpserver.Server{"test": {URL: h.URL}})
	runtimetest.Run(t, fixture(rt, "test"))
}

// call runs tool name on server with args and returns the output or failure.
func call(t testing.TB, rt runtimes.Runtime, server, name, args string) (json.RawMessage, *runtimes.Error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	res, err := rt.Run(ctx, &runtimes.Call{Tool: tool(server, name), Args: json.RawMessage(args), ID: "test"})
	if err != nil {
		return nil, runtimes.AsError(err)
	}
	return res.Output, nil
}

func mustCall(t testing.TB, rt runtimes.Runtime, server, name, args string) json.RawMessage {
	t.Helper()
	out, e := call(t, rt, server, name, args)
	if e != nil {
		t.Fatalf("%s on %s: %v", name, server, e)
	}
	return out
}
