package mcp_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/mcp"
)

// activateTool registers manifest as an admin and makes it active.
func activateTool(t *testing.T, e *apitest.Env, manifest map[string]any) {
	t.Helper()
	admin := apitest.Token(t, "ada", auth.PermAdmin)
	var reg struct {
		RegisterTool struct {
			Typename    string `json:"__typename"`
			Ref         string
			ContentHash string
		}
	}
	e.OK(t, admin, `mutation($m: JSON!) { registerTool(input: {manifest: $m}) { __typename ... on WriteSuccess { ref contentHash } } }`, map[string]any{"m": manifest}, &reg)
	if reg.RegisterTool.Typename != "WriteSuccess" {
		t.Fatalf("register %v: %+v", manifest["name"], reg)
	}
	var upd struct {
		UpdateArtifact struct {
			Typename string `json:"__typename"`
		}
	}
	e.OK(t, admin, `mutation($r: Ref!, $h: String!) { updateArtifact(input: {ref: $r, baseContentHash: $h, lifecycleState: "active"}) { __typename } }`,
		map[string]any{"r": "tool:" + manifest["name"].(string), "h": reg.RegisterTool.ContentHash}, &upd)
	if upd.UpdateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("activate %v: %+v", manifest["name"], upd)
	}
}

func checksumManifest(t *testing.T, name string, mutate func(map[string]any)) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../../tools/checksum/tool.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["name"] = name
	mutate(m)
	return m
}

// Every answer of a substrate tool with an output schema is structured and
// valid against the schema the list gives, whatever the call's state — as
// the npm and Python SDKs require (they refuse an answer without
// structured content, or one that breaks the schema): a queued call is its
// status with how to follow it, a result that breaks the tool's own schema
// is the call with the result and its violations. Before, both were text
// only, and both SDKs threw.
func TestSubstrateToolAnswersAreStructuredInEveryState(t *testing.T) {
	e := env(t, mcp.Options{})
	// A long declared wall time queues the call.
	activateTool(t, e, checksumManifest(t, "slow.sha256", func(m map[string]any) { m["resource_caps"] = map[string]any{"wall_time_min": 5} }))
	// An output schema the tool's result breaks.
	activateTool(t, e, checksumManifest(t, "strict.sha256", func(m map[string]any) {
		m["output_schema"] = map[string]any{"type": "object", "required": []any{"md5"}, "properties": map[string]any{"md5": map[string]any{"type": "string"}}}
	}))
	alice := apitest.Contributor(t, "alice")
	cs, changed := watchTools(t, e, alice)
	listed(t, cs, changed, func(m map[string]*sdk.Tool) bool {
		return m["tool.slow.sha256"] != nil && m["tool.strict.sha256"] != nil
	})

	queued := call(t, cs, "tool.slow.sha256", map[string]any{"text": "abc"})
	raw, _ := json.Marshal(queued.StructuredContent)
	if queued.IsError || queued.StructuredContent == nil {
		t.Fatalf("a queued call: %s %s", text(queued), raw)
	}
	checkOutput(t, cs, "tool.slow.sha256", raw)
	var st struct {
		ToolCall struct{ ID, Ref, Status, Follow string } `json:"tool_call"`
	}
	_ = json.Unmarshal(raw, &st)
	if (st.ToolCall.Status != "queued" && st.ToolCall.Status != "running") || st.ToolCall.Ref != "tool_call:"+st.ToolCall.ID ||
		!strings.Contains(st.ToolCall.Follow, "get_tool_call") {
		t.Fatalf("the queued call's status: %s", raw)
	}
	// get_tool_call follows it to its result.
	var got struct {
		ToolCall struct {
			Status string
			Result json.RawMessage
		}
	}
	// Each tool_call event from the start of the log is a moment its
	// status may have changed: none is missed between a check and a wait.
	ws := e.WS(t, alice)
	defer ws.Close()
	ws.Subscribe("calls", `subscription { events(types: ["tool_call.*"], from: START) { type } }`, nil)
	for {
		data(t, cs, "get_tool_call", call(t, cs, "get_tool_call", map[string]any{"id": st.ToolCall.ID}), &got)
		if got.ToolCall.Status == "SUCCEEDED" {
			break
		}
		if got.ToolCall.Status == "FAILED" || got.ToolCall.Status == "CANCELLED" {
			t.Fatalf("the queued call ended %s", got.ToolCall.Status)
		}
		if m := ws.Next("calls"); m.Type != "next" {
			t.Fatalf("the event subscription answered %+v", m)
		}
	}
	if !strings.Contains(string(got.ToolCall.Result), "ba7816bf") {
		t.Fatalf("its result: %s", got.ToolCall.Result)
	}

	broken := call(t, cs, "tool.strict.sha256", map[string]any{"text": "abc"})
	raw, _ = json.Marshal(broken.StructuredContent)
	if broken.IsError || broken.StructuredContent == nil || !strings.Contains(string(raw), `"output_violations"`) || !strings.Contains(string(raw), "ba7816bf") {
		t.Fatalf("a result breaking the output schema: %s %s", text(broken), raw)
	}
	checkOutput(t, cs, "tool.strict.sha256", raw)

	// A conforming result is the result itself, as before.
	ok := call(t, cs, "tool.slow.sha256", map[string]any{"text": "abc"})
	raw, _ = json.Marshal(ok.StructuredContent)
	checkOutput(t, cs, "tool.slow.sha256", raw)

	// A viewer does not see tool.* and calling one says why.
	viewer := mustConnect(t, e, apitest.Token(t, "vera", auth.PermViewer))
	denied := call(t, viewer, "tool.slow.sha256", map[string]any{"text": "abc"})
	if te := toolError(t, denied); te["code"] != "PERMISSION_DENIED" || !strings.Contains(te["message"].(string), "contributor permission") {
		t.Fatalf("a viewer's call of a substrate tool: %v", te)
	}
}
