package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/mcpserver"
)

// The ways a tools/call result becomes an output, over both transports.
func TestResults(t *testing.T) {
	srv, _ := stdioServer(t)
	h := newHTTPServer(t)
	rt := newRuntime(t, map[string]mcpserver.Server{"stdio": srv, "http": {URL: h.URL}})
	for _, server := range []string{"stdio", "http"} {
		t.Run(server, func(t *testing.T) {
			// A single text content that is JSON is the output.
			if out := mustCall(t, rt, server, "echo", `{"a":[1,2]}`); !sameJSON(out, `{"a":[1,2]}`) {
				t.Errorf("echo: %s", out)
			}
			// Text that is not JSON comes as the content list.
			if out := mustCall(t, rt, server, "plain", `{}`); !sameJSON(out, `{"content":[{"type":"text","text":"hello, not JSON"}]}`) {
				t.Errorf("plain: %s", out)
			}
			// structuredContent with its text mirror passes on the exact
			// text: an integer past float64's precision survives.
			if out := mustCall(t, rt, server, "bigint", `{}`); string(out) != `{"n":12345678901234567891}` {
				t.Errorf("bigint: %s, want the integer digit for digit", out)
			}
			// isError is a tool failure with the server's message.
			_, e := call(t, rt, server, "fail", `{}`)
			if e == nil || e.Code != runtimes.CodeToolError || e.Setup || !strings.Contains(e.Message, "the flux capacitor is out of flux") {
				t.Errorf("fail: %+v, want a tool_error (not setup) carrying the server's message", e)
			}
			// A tool the server does not have is a setup failure that
			// names it and lists the tools there are.
			_, e = call(t, rt, server, "nope", `{}`)
			if e == nil || e.Code != runtimes.CodeRefused || !e.Setup || !strings.Contains(e.Message, `"nope"`) || !strings.Contains(e.Message, "echo, env, fail") {
				t.Errorf("nope: %+v, want a refused setup failure naming the tool and listing the server's", e)
			}
		})
	}
}

// A message past the SDK's frame limit is output_too_large, and the
// session it broke is replaced for the next call.
func TestGiantMessage(t *testing.T) {
	srv, _ := stdioServer(t)
	rt := newRuntime(t, map[string]mcpserver.Server{"stdio": srv})
	_, e := call(t, rt, "stdio", "giant", `{}`)
	if e == nil || e.Code != runtimes.CodeOutputTooLarge {
		t.Fatalf("giant: %+v, want output_too_large", e)
	}
	mustCall(t, rt, "stdio", "echo", `{}`)
}

// Progress the server reports for the call reaches Call.Progress, with the
// fraction MCP's progress and total make.
func TestProgress(t *testing.T) {
	srv, _ := stdioServer(t)
	h := newHTTPServer(t)
	rt := newRuntime(t, map[string]mcpserver.Server{"stdio": srv, "http": {URL: h.URL}})
	for _, server := range []string{"stdio", "http"} {
		t.Run(server, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got := make(chan runtimes.Progress, 1)
			done := make(chan error, 1)
			go func() {
				_, err := rt.Run(ctx, &runtimes.Call{Tool: tool(server, "sleep"), Args: json.RawMessage(`{}`),
					Progress: func(p runtimes.Progress) {
						select {
						case got <- p:
						default:
						}
					}})
				done <- err
			}()
			var p runtimes.Progress
			select {
			case p = <-got:
			case err := <-done:
				t.Fatalf("sleep ended without progress: %v", err)
			case <-time.After(patience):
				t.Fatal("no progress")
			}
			if p.Message != "sleeping" || p.Fraction == nil || *p.Fraction != 0.25 || p.Data["total"] != 4.0 {
				t.Errorf("progress %+v (fraction %v), want sleeping at 0.25 of 4", p, p.Fraction)
			}
			cancel()
			if e := runtimes.AsError(<-done); e.Code != runtimes.CodeCancelled {
				t.Errorf("cancelled sleep: %v", e)
			}
		})
	}
}

// Cancelling a call reaches the server (the SDK's notifications/cancelled):
// its handler's context ends.
func TestCancelReachesServer(t *testing.T) {
	h := newHTTPServer(t)
	rt := newRuntime(t, map[string]mcpserver.Server{"http": {URL: h.URL}})
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := rt.Run(ctx, &runtimes.Call{Tool: tool("http", "sleep"), Args: json.RawMessage(`{}`),
			Progress: func(runtimes.Progress) { once.Do(func() { close(started) }) }})
		done <- err
	}()
	<-started
	cancel()
	<-done
	select {
	case <-h.st.sleepsEnded:
	case <-time.After(patience):
		t.Fatal("the server's sleep was never cancelled")
	}
}

// runtime_config.timeout_ms is a wall time of its own; the smaller of it and
// resource_caps.wall_time applies.
func TestTimeoutMS(t *testing.T) {
	h := newHTTPServer(t)
	rt := newRuntime(t, map[string]mcpserver.Server{"http": {URL: h.URL}})
	tl := &runtimes.Tool{Name: "t", Runtime: mcpserver.Name, Config: json.RawMessage(`{"server":"http","tool_name":"sleep","timeout_ms":150}`)}
	tl.Caps.WallTime = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	_, err := rt.Run(ctx, &runtimes.Call{Tool: tl, Args: json.RawMessage(`{}`)})
	if e := runtimes.AsError(err); e.Code != runtimes.CodeWallTimeout || !strings.Contains(e.Message, "150ms") {
		t.Fatalf("got %v, want a wall_timeout of 150ms", err)
	}
	// The server hears of it (notifications/cancelled) and stops.
	select {
	case <-h.st.sleepsEnded:
	case <-time.After(patience):
		t.Fatal("the server's sleep went on after the wall time")
	}
}

// The operator's headers reach an HTTP server.
func TestHeaders(t *testing.T) {
	h := newHTTPServer(t)
	rt := newRuntime(t, map[string]mcpserver.Server{"http": {URL: h.URL, Headers: map[string]string{"X-Team": "chem"}}})
	mustCall(t, rt, "http", "echo", `{}`)
	if got, _ := h.lastTeam.Load().(string); got != "chem" {
		t.Errorf("X-Team reached the server as %q, want chem", got)
	}
}
