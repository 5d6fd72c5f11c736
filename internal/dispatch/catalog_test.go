package dispatch_test

import (
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/runtimes/inprocess"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

// The catalog: tool(name, version), tools(query, runtime, lifecycleState),
// searched over names, summaries and examples.
func TestCatalog(t *testing.T) {
	e := env(t, nil)
	activate(t, e, manifest(t, "checksum"))
	activate(t, e, manifest(t, "gate_run"))
	register(t, e, admin(t), manifest(t, "compare")) // a draft
	type conn struct {
		Tools struct {
			Edges []struct {
				Node struct{ Name, LifecycleState string }
			}
		}
	}
	names := func(q string, vars map[string]any) []string {
		var out conn
		e.OK(t, alice(t), q, vars, &out)
		var ns []string
		for _, ed := range out.Tools.Edges {
			ns = append(ns, ed.Node.Name)
		}
		return ns
	}
	const q = `query($q: String, $s: String) { tools(query: $q, lifecycleState: $s) { edges { node { ... on Tool { name lifecycleState } } } } }`
	if got := names(q, map[string]any{"q": "digest"}); len(got) != 1 || got[0] != "checksum.sha256" {
		t.Fatalf("search by summary: %v", got)
	}
	if got := names(q, map[string]any{"q": "quality gate"}); len(got) != 1 || got[0] != "gate_run" {
		t.Fatalf("search gate: %v", got)
	}
	// The two activated here, the skills' tools and the action verbs' the
	// server installed.
	if got := names(q, map[string]any{"s": "active"}); len(got) != 2+5+len(tools.Verbs(skills.Deps{})) || !contains(got, "checksum.sha256") || !contains(got, "pk.nca") {
		t.Fatalf("active tools: %v", got)
	}
	if got := names(q, map[string]any{"s": "draft"}); len(got) != 1 || got[0] != "compare" {
		t.Fatalf("drafts: %v", got)
	}
	var one struct {
		Tool *struct {
			Name, Version string
			InputSchema   map[string]any
		}
	}
	e.OK(t, alice(t), `{ tool(name: "checksum.sha256") { name version inputSchema } }`, nil, &one)
	if one.Tool == nil || one.Tool.Version != "1.0.0" || one.Tool.InputSchema["type"] != "object" {
		t.Fatalf("tool: %+v", one.Tool)
	}
	e.OK(t, alice(t), `{ tool(name: "no.such") { name } }`, nil, &one)
	if one.Tool != nil {
		t.Fatalf("a missing tool: %+v", one.Tool)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Tool.usage over a page of tools is read in one statement, however many
// tools the page holds (a loader, not one query per tool).
func TestToolUsageIsBatched(t *testing.T) {
	e := env(t, map[string]inprocess.Func{"test.echo": echo}, func(c *app.Config) { c.Server.ReportStatements = true })
	activate(t, e, testTool("test.a", "test.echo"))
	activate(t, e, testTool("test.b", "test.echo"))
	for i := range 3 {
		invoke(t, e, alice(t), "test.a", map[string]any{"value": i})
	}
	invoke(t, e, alice(t), "test.b", map[string]any{"value": 1})
	statements := func(q string) float64 {
		r := e.Post(t, alice(t), q, nil)
		if len(r.Errors) > 0 {
			t.Fatalf("%s: %s", q, r.Raw)
		}
		n, _ := r.Extensions["sqlStatements"].(float64)
		return n
	}
	const withUsage = `{ tools(first: 50) { edges { node { ... on Tool { name usage { calls } } } } } }`
	const without = `{ tools(first: 50) { edges { node { ... on Tool { name } } } } }`
	if with, plain := statements(withUsage), statements(without); with != plain+1 {
		t.Fatalf("usage of every tool of the page took %v statements more, want 1", with-plain)
	}
	var out struct {
		Tools struct {
			Edges []struct {
				Node struct {
					Name  string
					Usage struct{ Calls int }
				}
			}
		}
	}
	e.OK(t, alice(t), withUsage, nil, &out)
	calls := map[string]int{}
	for _, ed := range out.Tools.Edges {
		calls[ed.Node.Name] = ed.Node.Usage.Calls
	}
	if calls["test.a"] != 3 || calls["test.b"] != 1 || calls["checksum.sha256"] != 0 {
		t.Fatalf("usage %v", calls)
	}
}

// A free synchronous in_process call costs two statements, as createArtifact
// costs one plus the tool's read: the tool is read once, and the record (with
// its event) is one statement, its reference to the tool version just read
// not checked again.
func TestInvokeStatements(t *testing.T) {
	e := env(t, map[string]inprocess.Func{"test.echo": echo}, func(c *app.Config) { c.Server.ReportStatements = true })
	activate(t, e, testTool("test.echo", "test.echo"))
	invoke(t, e, alice(t), "test.echo", map[string]any{"value": 0}) // the actor's row exists from here on
	r := e.Post(t, alice(t), `mutation { invokeTool(input: {name: "test.echo", args: {value: 1}}) { ... on ToolCall { status } } }`, nil)
	if len(r.Errors) > 0 || !strings.Contains(string(r.Raw), `"SUCCEEDED"`) {
		t.Fatalf("invoke: %s", r.Raw)
	}
	if n, _ := r.Extensions["sqlStatements"].(float64); n != 2 {
		t.Fatalf("a free synchronous call took %v statements, want 2 (read the tool, record the call)", n)
	}
}
