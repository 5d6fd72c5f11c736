package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/runtimes"
)

// Run implements runtimes.Runtime: one tools/call on the tool's server, on
// the server's shared session.
func (r *Runtime) Run(ctx context.Context, c *runtimes.Call) (*runtimes.Result, error) {
	cfg, ps := r.config(c.Tool)
	if len(ps) > 0 {
		return nil, runtimes.Errorf(runtimes.CodeRefused, true, "%s", ps[0].Message)
	}
	if !r.begin() {
		return nil, runtimes.Errorf(runtimes.CodeRefused, true, "the mcp_server runtime is shut down")
	}
	defer r.runs.Done()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(r.base, func() { cancel(errShutdown) })()
	wall := wallTime(c.Tool.Caps.WallTime, cfg.timeout())
	if wall > 0 {
		var cancelWall context.CancelFunc
		ctx, cancelWall = context.WithTimeout(ctx, wall)
		defer cancelWall()
	}

	conn := r.conns[cfg.Server]
	params := &mcp.CallToolParams{Name: cfg.ToolName, Arguments: arguments(c.Args)}
	if c.Progress != nil {
		token, remove := r.progress.add(c.Progress)
		defer remove()
		params.SetProgressToken(token)
	}
	for attempt := 0; ; attempt++ {
		s, err := conn.get(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctxFailure(ctx, wall)
			}
			return nil, connectFailure(err)
		}
		sent := &delivery{}
		res, err := s.cs.CallTool(withDelivery(ctx, sent), params)
		if err == nil {
			out, err := r.output(conn.name, cfg.ToolName, res)
			if err != nil {
				return nil, err
			}
			return &runtimes.Result{Output: out}, nil
		}
		if ctx.Err() != nil {
			return nil, ctxFailure(ctx, wall)
		}
		var werr *jsonrpc.Error
		if !errors.Is(err, mcp.ErrConnectionClosed) && errors.As(err, &werr) {
			return nil, r.rpcFailure(ctx, s, conn.name, cfg.ToolName, werr)
		}
		// The connection failed: this session is of no more use.
		conn.drop(s)
		if frameTooLarge(err) {
			return nil, runtimes.Errorf(runtimes.CodeOutputTooLarge, false,
				"the MCP server %q answered %q with a message larger than the MCP client accepts", conn.name, cfg.ToolName)
		}
		if notDelivered(conn.srv.Transport(), sent, err, requestBound(c.Args, cfg.ToolName)) {
			if attempt == 0 {
				s.log.Info("mcp session had died; reconnecting", "error", err)
				continue
			}
			s.log.Warn("mcp session died again after reconnecting", "tool_name", cfg.ToolName, "error", err)
			return nil, runtimes.Errorf(runtimes.CodeUnreachable, true,
				"the MCP server %q dropped the session again right after a reconnect; the call to %q was not made", conn.name, cfg.ToolName).
				With("server", conn.name).With("tool_name", cfg.ToolName)
		}
		s.log.Warn("mcp connection broke during a call", "tool_name", cfg.ToolName, "error", err)
		return nil, runtimes.Errorf(runtimes.CodeUnreachable, true,
			"the connection to the MCP server %q broke during the call to %q (the server may have run it)", conn.name, cfg.ToolName).
			With("server", conn.name).With("tool_name", cfg.ToolName)
	}
}

// wallTime is the smaller of the positive limits.
func wallTime(caps, config time.Duration) time.Duration {
	switch {
	case caps <= 0:
		return config
	case config <= 0:
		return caps
	}
	return min(caps, config)
}

// arguments passes the validated args on verbatim; an empty body is the
// empty object MCP expects.
func arguments(args json.RawMessage) any {
	if len(strings.TrimSpace(string(args))) == 0 {
		return map[string]any{}
	}
	return args
}

// ctxFailure classifies a call whose context ended: Close, the wall time, or
// the caller's cancellation.
func ctxFailure(ctx context.Context, wall time.Duration) error {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, errShutdown):
		return runtimes.Errorf(runtimes.CodeCancelled, false, "the call was cancelled: the server is shutting down")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		if wall > 0 {
			return runtimes.Errorf(runtimes.CodeWallTimeout, false, "the tool did not finish within its wall time of %s", wall)
		}
		return runtimes.Errorf(runtimes.CodeWallTimeout, false, "the tool did not finish within its deadline")
	}
	return runtimes.Errorf(runtimes.CodeCancelled, false, "the call was cancelled")
}

func connectFailure(err error) error {
	var ce *connectError
	if errors.As(err, &ce) {
		return runtimes.Errorf(ce.code, ce.setup, "%s", ce.message)
	}
	return runtimes.Errorf(runtimes.CodeSetupFailed, true, "the MCP server could not be connected")
}

// rpcFailure classifies a JSON-RPC error answer to tools/call. An unknown
// tool is worth a list of the tools there are, so the registrant can fix
// runtime_config.tool_name.
func (r *Runtime) rpcFailure(ctx context.Context, s *session, server, tool string, werr *jsonrpc.Error) error {
	if werr.Code == jsonrpc.CodeInvalidParams {
		if names, err := toolNames(ctx, s.cs); err == nil && !slices.Contains(names, tool) {
			return runtimes.Errorf(runtimes.CodeRefused, true, "the MCP server %q has no tool %q; it has: %s", server, tool, listOrNone(names)).
				With("server", server).With("tool_name", tool)
		}
		return runtimes.Errorf(runtimes.CodeToolError, false, "the MCP server %q refused the call to %q: %s", server, tool, cut(werr.Message, maxMessage)).
			With("server", server).With("tool_name", tool).With("jsonrpc_code", werr.Code)
	}
	return runtimes.Errorf(runtimes.CodeToolError, false, "the MCP server %q failed the call to %q: %s", server, tool, cut(werr.Message, maxMessage)).
		With("server", server).With("tool_name", tool).With("jsonrpc_code", werr.Code)
}

// toolNames lists the server's tools, at most 100 of them.
func toolNames(ctx context.Context, cs *mcp.ClientSession) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var names []string
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, t.Name)
		if len(names) == 100 {
			break
		}
	}
	slices.Sort(names)
	return names, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// frameTooLarge recognises the SDK's refusal of a message past its frame
// limit (16 MiB on stdio and HTTP alike). The SDK does not export the
// error, so its text is matched.
func frameTooLarge(err error) bool {
	s := err.Error()
	return strings.Contains(s, "exceeded the configured maximum line length") || strings.Contains(s, "SSE event exceeded")
}

var _ runtimes.Runtime = (*Runtime)(nil)
