package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/runtimes"
)

// connectError is a failed connect, with what the caller may be told kept
// apart from the cause the operator's log gets.
type connectError struct {
	code    string
	setup   bool
	message string
	cause   error
}

func (e *connectError) Error() string { return e.message + ": " + e.cause.Error() }
func (e *connectError) Unwrap() error { return e.cause }

// connect starts or reaches the server and completes the MCP handshake,
// within Options.ConnectTimeout; ctx is the runtime's, which Close cancels.
func (r *Runtime) connect(ctx context.Context, name string, srv Server) (*session, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.ConnectTimeout)
	defer cancel()
	log := r.opts.Logger.With("mcp_server", name, "transport", srv.Transport())
	s := &session{log: log}
	var t mcp.Transport
	if srv.Transport() == "stdio" {
		s.cmd = r.command(name, srv, log)
		t = &mcp.CommandTransport{Command: s.cmd, TerminateDuration: r.opts.TerminateGrace}
	} else {
		t = &mcp.StreamableClientTransport{
			Endpoint:   srv.URL,
			HTTPClient: r.httpClient(srv),
			// Progress and results come on each call's own response
			// stream; the runtime wants nothing the server might send
			// outside a call, so it opens no standing GET stream.
			DisableStandaloneSSE: true,
		}
	}
	cs, err := r.client.Connect(ctx, t, nil)
	if err != nil {
		s.killGroup()
		log.Warn("connect to mcp server", "error", err)
		return nil, classifyConnect(name, srv, s.cmd, err)
	}
	log.Info("mcp session connected", "protocol", cs.InitializeResult().ProtocolVersion, "session", cs.ID())
	s.cs = cs
	return s, nil
}

func classifyConnect(name string, srv Server, cmd *exec.Cmd, err error) error {
	failed := func(message string) error {
		return &connectError{code: codeFor(srv), setup: true, message: fmt.Sprintf(message, name), cause: err}
	}
	switch {
	case errors.Is(err, context.Canceled):
		// Connects run on the runtime's context: only Close cancels it.
		return &connectError{code: runtimes.CodeCancelled, message: "the call was cancelled: the server is shutting down", cause: err}
	case errors.Is(err, context.DeadlineExceeded):
		return failed("the MCP server %q did not complete the MCP handshake in time")
	case cmd != nil && cmd.Process == nil:
		return failed("the MCP server %q could not be started")
	case cmd != nil:
		return failed("the MCP server %q started but did not complete the MCP handshake (it may have exited)")
	default:
		return failed("the MCP server %q could not be reached or refused the MCP handshake")
	}
}

// codeFor is the failure code of a server that could not be connected: a
// stdio server that would not start is a setup failure, an HTTP server that
// cannot be reached is unreachable.
func codeFor(srv Server) string {
	if srv.Transport() == "stdio" {
		return runtimes.CodeSetupFailed
	}
	return runtimes.CodeUnreachable
}

// command builds the stdio server's process: its own process group (so
// Close can kill what it forks), a clean environment, stderr to the log.
func (r *Runtime) command(name string, srv Server, log *slog.Logger) *exec.Cmd {
	cmd := exec.Command(srv.Command[0], srv.Command[1:]...)
	cmd.Env = childEnv(srv.Env)
	cmd.Stderr = &lineLogger{log: log}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A helper the server forked may hold stderr open after the server
	// exits; WaitDelay stops that from holding Close.
	cmd.WaitDelay = r.opts.TerminateGrace
	return cmd
}

// passedEnv are the variables of the substrate's environment a stdio
// server inherits: enough to find programs and a home, nothing that could
// be a secret.
var passedEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

func childEnv(extra map[string]string) []string {
	env := map[string]string{}
	for _, k := range passedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for k, v := range extra {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// httpClient is the client for one HTTP server: the runtime's transport,
// the server's headers, a record of whether a call's POST went out
// (delivery.go), and no redirects (a redirect would carry the
// headers to a host the operator did not name).
func (r *Runtime) httpClient(srv Server) *http.Client {
	var rt http.RoundTripper = r.http
	if len(srv.Headers) > 0 {
		rt = &headerTransport{base: r.http, headers: srv.Headers}
	}
	return &http.Client{
		Transport: deliveryTransport{base: rt},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

// RoundTrip adds the operator's headers; the SDK's own (content type,
// session id, protocol version) win over them.
func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		if req.Header.Get(k) == "" {
			req.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(req)
}

// lineLogger logs a server's stderr a line at a time, cutting long lines.
type lineLogger struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

const maxLogLine = 4 << 10

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) > maxLogLine {
				l.emit(l.buf)
				l.buf = l.buf[:0]
			}
			return len(p), nil
		}
		l.emit(l.buf[:i])
		l.buf = append(l.buf[:0], l.buf[i+1:]...)
	}
}

func (l *lineLogger) emit(line []byte) {
	if len(line) > maxLogLine {
		line = line[:maxLogLine]
	}
	l.log.Info("mcp server stderr", "line", string(line))
}
