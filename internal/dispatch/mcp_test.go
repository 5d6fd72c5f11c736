package dispatch_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/mcpserver"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

// An mcp_server tool runs through invokeTool end to end: the shipped
// mcp-textkit server, started over stdio by the runtime as the operator
// configured it, answers; an unknown tool on that server is a FAILED call
// naming it.
func TestMCPServerTool(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mcp-textkit")
	if out, err := exec.Command("go", "build", "-o", bin, "../../tools/mcp-textkit").CombinedOutput(); err != nil {
		t.Fatalf("build mcp-textkit: %v\n%s", err, out)
	}
	e := env(t, nil, func(c *app.Config) {
		c.Runtimes = func(st *store.Store) (*runtimes.Registry, error) {
			mcp, err := mcpserver.New(mcpserver.Options{Servers: map[string]mcpserver.Server{"textkit": {Command: []string{bin}}}})
			if err != nil {
				return nil, err
			}
			return runtimes.NewRegistry(tools.Runtime(skills.Deps{Store: st}), mcp)
		}
	})
	m := manifest(t, "mcp-textkit")
	activate(t, e, m)
	ex := m["examples"].([]any)[0].(map[string]any)
	c := invoke(t, e, alice(t), m["name"].(string), ex["args"])
	want, _ := json.Marshal(ex["result"])
	if c.Status != "SUCCEEDED" || !sameJSON(c.Result, want) || len(c.OutputViolations) != 0 {
		t.Fatalf("text_stats over MCP: %+v, want %s", c, want)
	}
	// A configuration naming a server the operator did not register is
	// refused at registration.
	bad := manifest(t, "mcp-textkit")
	bad["name"] = "textkit.elsewhere"
	bad["runtime_config"] = map[string]any{"server": "nowhere", "tool_name": "text_stats"}
	if r := register(t, e, alice(t), bad); r.RegisterTool.Typename != "ValidationFailed" || r.RegisterTool.Problems[0].Path != "content.runtime_config.server" {
		t.Fatalf("unknown MCP server: %+v", r.RegisterTool)
	}
	missing := manifest(t, "mcp-textkit")
	missing["name"] = "textkit.missing"
	missing["runtime_config"] = map[string]any{"server": "textkit", "tool_name": "no_such_tool"}
	activate(t, e, missing)
	f := invoke(t, e, alice(t), "textkit.missing", ex["args"])
	if f.Status != "FAILED" || f.Error == nil || f.Error.Code != runtimes.CodeRefused {
		t.Fatalf("unknown tool on the server: %+v", f)
	}
}
