package mcpserver

import (
	"fmt"
	"strings"
	"time"

	"github.com/scidex/substrate/runtimes"
)

// maxTimeout bounds runtime_config.timeout_ms: a day, past which a call
// belongs on a queue with a declared wall time, not a per-call timeout.
const maxTimeout = 24 * time.Hour

// config is an mcp_server tool's runtime_config.
type config struct {
	Server    string `json:"server"`
	ToolName  string `json:"tool_name"`
	TimeoutMS *int64 `json:"timeout_ms,omitempty"`
}

func (c config) timeout() time.Duration {
	if c.TimeoutMS == nil {
		return 0
	}
	return time.Duration(*c.TimeoutMS) * time.Millisecond
}

// Check implements runtimes.Runtime: runtime_config must name a configured
// server and a tool on it, and nothing else. It does not connect to the
// server (registration must not start programs); an unknown tool_name is
// reported by the first call.
func (r *Runtime) Check(t *runtimes.Tool) []runtimes.Problem {
	_, ps := r.config(t)
	return ps
}

func (r *Runtime) config(t *runtimes.Tool) (config, []runtimes.Problem) {
	c, err := runtimes.DecodeConfig[config](t.Config)
	if err != nil {
		return c, []runtimes.Problem{{Path: "runtime_config", Constraint: "mcp_server_config",
			Message: fmt.Sprintf(`an mcp_server runtime_config is {"server": "<configured server>", "tool_name": "<tool on it>", "timeout_ms": <optional, positive>} and nothing else: %v`, err)}}
	}
	var ps []runtimes.Problem
	switch _, ok := r.conns[c.Server]; {
	case c.Server == "":
		ps = append(ps, runtimes.Problem{Path: "runtime_config.server", Constraint: "required",
			Message: "an mcp_server tool names the operator's MCP server in runtime_config.server; configured: " + r.serverList()})
	case !ok:
		ps = append(ps, runtimes.Problem{Path: "runtime_config.server", Constraint: "configured_server",
			Message: fmt.Sprintf("%q is not an MCP server this substrate is configured with; configured: %s", c.Server, r.serverList())})
	}
	if strings.TrimSpace(c.ToolName) == "" {
		ps = append(ps, runtimes.Problem{Path: "runtime_config.tool_name", Constraint: "required",
			Message: "an mcp_server tool names the tool to call on its server in runtime_config.tool_name"})
	}
	if c.TimeoutMS != nil && (*c.TimeoutMS <= 0 || *c.TimeoutMS > maxTimeout.Milliseconds()) {
		ps = append(ps, runtimes.Problem{Path: "runtime_config.timeout_ms", Constraint: "range",
			Message: fmt.Sprintf("timeout_ms is %d; want 1 to %d milliseconds", *c.TimeoutMS, maxTimeout.Milliseconds())})
	}
	return c, ps
}

// serverList names the configured servers for a message.
func (r *Runtime) serverList() string {
	names := sortedNames(r.conns)
	if len(names) == 0 {
		return "none (the operator lists MCP servers with --mcp-servers)"
	}
	return strings.Join(names, ", ")
}
