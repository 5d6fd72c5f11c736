package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/mcpserver"
)

// A call is never sent twice once it may have been delivered. A stdio
// server that dies after reading the call, and an HTTP server that dies
// while the call runs (its stream had begun, so the client resumes it and
// finds the session gone), each fail the call as unreachable, saying the
// server may have run it, after exactly one delivery; the next call
// reconnects and runs.
func TestACallThatMayHaveBeenDeliveredIsNotResent(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		srv, _ := stdioServer(t)
		deliveries := filepath.Join(t.TempDir(), "deliveries")
		srv.Env[deliveriesEnv] = deliveries
		rt := newRuntime(t, map[string]mcpserver.Server{"test": srv})
		askWho(t, rt, "test")
		_, e := call(t, rt, "test", "once", `{"then": "exit"}`)
		assertMayHaveRun(t, e)
		if n := lines(t, deliveries); n != 1 {
			t.Errorf("the call reached the server %d times, want 1", n)
		}
		askWho(t, rt, "test")
	})
	t.Run("http", func(t *testing.T) {
		st := newServerState()
		var handler atomicHandler
		restart := func() {
			srv := newTestServer(st)
			handler.store(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
		}
		restart()
		h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.load().ServeHTTP(w, r) }))
		t.Cleanup(func() { st.releaseSleeps(); h.Close() })
		rt := newRuntime(t, map[string]mcpserver.Server{"test": {URL: h.URL}})
		askWho(t, rt, "test")

		done := make(chan *runtimes.Error, 1)
		go func() {
			_, err := rt.Run(context.Background(), &runtimes.Call{Tool: tool("test", "once"), Args: json.RawMessage(`{"then": "hang"}`),
				Progress: func(runtimes.Progress) {}})
			if err != nil {
				done <- runtimes.AsError(err)
				return
			}
			done <- nil
		}()
		<-st.delivered
		// The server dies mid-call: it forgets its sessions and drops every
		// connection, as a restarted process would.
		restart()
		h.CloseClientConnections()
		assertMayHaveRun(t, <-done)
		if n := st.deliveries.Load(); n != 1 {
			t.Errorf("the call reached the server %d times, want 1", n)
		}
		askWho(t, rt, "test")
	})
}

func assertMayHaveRun(t *testing.T, e *runtimes.Error) {
	t.Helper()
	if e == nil || e.Code != runtimes.CodeUnreachable || !e.Setup || !strings.Contains(e.Message, "may have run it") {
		t.Fatalf("got %+v, want an unreachable setup failure saying the server may have run the call", e)
	}
}

type atomicHandler struct {
	p atomic.Pointer[mcp.StreamableHTTPHandler]
}

func (a *atomicHandler) store(h *mcp.StreamableHTTPHandler) { a.p.Store(h) }
func (a *atomicHandler) load() *mcp.StreamableHTTPHandler   { return a.p.Load() }
