package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/scidex/substrate/runtimes"
)

// The test's MCP server: one set of tools served over stdio (by this test
// binary re-executed with serverEnv set, see TestMain) and over streamable
// HTTP (in process, by httptest).
const (
	serverEnv = "MCPSERVER_TEST_SERVE"
	// startsEnv names a file each stdio server appends its pid to when it
	// starts, so a test can count the processes the runtime started.
	startsEnv = "MCPSERVER_TEST_STARTS"
	// deliveriesEnv names a file each stdio server appends a line to when a
	// call of once arrives, so a test can count deliveries across restarts.
	deliveriesEnv = "MCPSERVER_TEST_DELIVERIES"
)

// serverState is what the test server counts.
type serverState struct {
	// handshakes counts successful initialize and server/discover
	// requests: one per client session.
	handshakes atomic.Int64
	// sleepsEnded receives when a sleep call's context ends on the server,
	// which is how a test sees notifications/cancelled arrive.
	sleepsEnded chan struct{}
	// release ends every sleep, for a test that has no way left to cancel
	// one (the client has gone).
	release     chan struct{}
	releaseOnce sync.Once
	// deliveries counts calls of once that reached a handler; delivered
	// receives as each does.
	deliveries atomic.Int64
	delivered  chan struct{}
}

func (st *serverState) releaseSleeps() { st.releaseOnce.Do(func() { close(st.release) }) }

func newServerState() *serverState {
	return &serverState{sleepsEnded: make(chan struct{}, 64), release: make(chan struct{}), delivered: make(chan struct{}, 64)}
}

var object = json.RawMessage(`{"type":"object"}`)

func text(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }

func newTestServer(st *serverState) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpserver-test", Version: "1.0.0"}, nil)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err == nil && (method == "initialize" || method == "server/discover" && modern(res)) {
				st.handshakes.Add(1)
			}
			return res, err
		}
	})
	add := func(name string, h mcp.ToolHandler) { s.AddTool(&mcp.Tool{Name: name, InputSchema: object}, h) }

	// echo answers its arguments as a JSON text content.
	add("echo", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: text(string(req.Params.Arguments))}, nil
	})
	// bad answers structuredContent that breaks a numeric output schema,
	// mirrored as text the way typed SDK handlers do.
	add("bad", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: map[string]any{"value": "not a number"}, Content: text(`{"value":"not a number"}`)}, nil
	})
	// sleep reports progress, then blocks until its call is cancelled.
	add("sleep", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		defer func() { st.sleepsEnded <- struct{}{} }()
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 4, Message: "sleeping"})
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-st.release:
			return nil, errors.New("released")
		}
	})
	// huge answers more than runtimes.MaxOutputBytes of structuredContent.
	add("huge", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: map[string]any{"value": strings.Repeat("x", runtimes.MaxOutputBytes)}, Content: []mcp.Content{}}, nil
	})
	// giant answers more than the SDK's 16 MiB frame limit.
	add("giant", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: text(strings.Repeat("y", 17<<20))}, nil
	})
	// env answers the value of the environment variable named by "name".
	add("env", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ Name string }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		v, ok := os.LookupEnv(a.Name)
		b, _ := json.Marshal(map[string]any{"value": v, "set": ok})
		return &mcp.CallToolResult{Content: text(string(b))}, nil
	})
	// fail is a tool that ran and failed.
	add("fail", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: text("the flux capacitor is out of flux")}, nil
	})
	// plain answers text that is not JSON.
	add("plain", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: text("hello, not JSON")}, nil
	})
	// bigint answers an integer float64 cannot hold, in structuredContent
	// and its text mirror.
	add("bigint", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"n":12345678901234567891}`), Content: text(`{"n":12345678901234567891}`)}, nil
	})
	// once counts its delivery, then dies without answering ("then":
	// "exit", a stdio server's process exits) or reports progress and
	// hangs until released ("then": "hang", for a test that kills the HTTP
	// server under it). Delivered again to the same server state, it
	// answers at once how often it was, so a resent call does not hang.
	add("once", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if n := st.deliveries.Add(1); n > 1 {
			return &mcp.CallToolResult{Content: text(fmt.Sprintf(`{"deliveries":%d}`, n))}, nil
		}
		if f := os.Getenv(deliveriesEnv); f != "" {
			fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err == nil {
				fmt.Fprintln(fh, os.Getpid())
				fh.Close()
			}
		}
		var a struct{ Then string }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		if a.Then == "exit" {
			os.Exit(3)
		}
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "running"})
		}
		st.delivered <- struct{}{}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-st.release:
			return nil, errors.New("released")
		}
	})
	// whoami says which process answers and how many sessions it has seen.
	add("whoami", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: text(fmt.Sprintf(`{"pid":%d,"handshakes":%d}`, os.Getpid(), st.handshakes.Load()))}, nil
	})
	// spawn starts a helper process that outlives the call and answers its pid.
	add("spawn", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		go func() { _ = cmd.Wait() }()
		return &mcp.CallToolResult{Content: text(fmt.Sprintf(`{"pid":%d}`, cmd.Process.Pid))}, nil
	})
	return s
}

// modern reports whether a server/discover answer offers the sessionless
// protocol. A stateful HTTP server offers only the older ones, and the
// client goes on to initialize, which is then the handshake to count.
func modern(res mcp.Result) bool {
	d, ok := res.(*mcp.DiscoverResult)
	return ok && slices.ContainsFunc(d.SupportedVersions, func(v string) bool { return v >= "2026-07-28" })
}

// serveStdio runs the test server on stdin and stdout until stdin closes.
func serveStdio() {
	if f := os.Getenv(startsEnv); f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(fh, os.Getpid())
			fh.Close()
		}
	}
	err := newTestServer(newServerState()).Run(context.Background(), &mcp.StdioTransport{})
	if err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		fmt.Fprintln(os.Stderr, "test server:", err)
	}
}

// alive reports whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// exitedChild reports whether pid, a child of this process, has exited
// completely: it can be reaped (or already has been). A zombie leader whose
// other threads are still being torn down is not there yet.
func exitedChild(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return errors.Is(err, unix.ECHILD) || (err == nil && info.Signo != 0)
}

// exists reports whether pid is in the process table at all (a zombie is).
func exists(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}
