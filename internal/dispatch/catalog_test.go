package dispatch_test

import (
	"testing"
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
	// The two activated here, and the skills' tools the server installed.
	if got := names(q, map[string]any{"s": "active"}); len(got) != 2+4 || !contains(got, "checksum.sha256") || !contains(got, "pk.nca") {
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
