package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/mcp"
)

// watchTools connects a client that hears notifications/tools/list_changed:
// its listen stream is acknowledged before it returns, so every later change
// of the list is heard.
func watchTools(t *testing.T, e *apitest.Env, token string) (*sdk.ClientSession, <-chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 64)
	acks := make(chan *sdk.SubscriptionsAcknowledgedParams, 1)
	cs, err := connectWith(t, e, token, &sdk.ClientOptions{ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
		changed <- struct{}{}
	}}, "", ackTo(acks))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ack := <-acks:
		if !ack.Notifications.ToolsListChanged {
			t.Fatalf("the server did not agree to tools/list_changed: %+v", ack.Notifications)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the tools/list_changed listen was not acknowledged within 30s")
	}
	return cs, changed
}

// listed lists the tools until want says the list is as expected, waiting
// for a notifications/tools/list_changed between lists.
func listed(t *testing.T, cs *sdk.ClientSession, changed <-chan struct{}, want func(map[string]*sdk.Tool) bool) map[string]*sdk.Tool {
	t.Helper()
	for {
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*sdk.Tool{}
		for _, tl := range lt.Tools {
			byName[tl.Name] = tl
		}
		if want(byName) {
			return byName
		}
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			t.Fatalf("no notifications/tools/list_changed within 30s, and the list is not as expected: %d tools", len(byName))
		}
	}
}

// The substrate's own active tools are MCP tools: listed with their schemas
// as declared, called through invokeTool (recorded as a tool_call), and gone
// from the list once deprecated.
func TestSubstrateToolsAreMCPTools(t *testing.T) {
	e := env(t, mcp.Options{})
	admin := apitest.Token(t, "ada", auth.PermAdmin)
	cs, changed := watchTools(t, e, apitest.Contributor(t, "alice"))
	b, err := os.ReadFile("../../tools/checksum/tool.json")
	if err != nil {
		t.Fatal(err)
	}
	var manifest map[string]any
	_ = json.Unmarshal(b, &manifest)
	var reg struct {
		RegisterTool struct{ Ref, ContentHash string }
	}
	e.OK(t, admin, `mutation($m: JSON!) { registerTool(input: {manifest: $m}) { ... on WriteSuccess { ref contentHash } } }`, map[string]any{"m": manifest}, &reg)
	var upd struct{ UpdateArtifact struct{ ContentHash string } }
	e.OK(t, admin, `mutation($h: String!) { updateArtifact(input: {ref: "tool:checksum.sha256", baseContentHash: $h, lifecycleState: "active"}) { ... on WriteSuccess { contentHash } } }`,
		map[string]any{"h": reg.RegisterTool.ContentHash}, &upd)

	t.Cleanup(func() {
		if t.Failed() {
			for _, l := range strings.Split(e.Log.String(), "\n") {
				if strings.Contains(l, "mcp") {
					t.Log(l)
				}
			}
		}
	})
	tools := listed(t, cs, changed, func(m map[string]*sdk.Tool) bool { return m["tool.checksum.sha256"] != nil })
	tl := tools["tool.checksum.sha256"]
	in, _ := json.Marshal(tl.InputSchema)
	if !strings.Contains(string(in), `"text"`) || tl.OutputSchema == nil || tools["tool.pk.nca"] == nil {
		t.Fatalf("the substrate tool as listed: %s (pk.nca listed: %v)", in, tools["tool.pk.nca"] != nil)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "tool.checksum.sha256", Arguments: map[string]any{"text": "abc"}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(out), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
		t.Fatalf("calling the substrate tool: %+v %s", res, out)
	}
	if n := e.Count(t, "artifacts WHERE type = 'tool_call'"); n != 1 {
		t.Fatalf("%d tool calls recorded, want 1", n)
	}
	bad, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "tool.checksum.sha256", Arguments: map[string]any{"text": 5}})
	if err == nil && !bad.IsError {
		t.Fatalf("a bad argument ran: %+v", bad)
	}

	e.OK(t, admin, `mutation($h: String!) { updateArtifact(input: {ref: "tool:checksum.sha256", baseContentHash: $h, lifecycleState: "deprecated"}) { __typename } }`,
		map[string]any{"h": upd.UpdateArtifact.ContentHash}, nil)
	listed(t, cs, changed, func(m map[string]*sdk.Tool) bool { return m["tool.checksum.sha256"] == nil })

	viewer := mustConnect(t, e, apitest.Token(t, "vera", auth.PermViewer))
	vt := listed(t, viewer, nil, func(map[string]*sdk.Tool) bool { return true })
	for name := range vt {
		if strings.HasPrefix(name, mcp.ToolPrefix) {
			t.Fatalf("a viewer, who cannot invoke tools, is shown %s", name)
		}
	}
}

// On a session that carries its caller's token (stdio), a substrate tool
// listed after the session began runs as that caller: the catalog's later
// additions keep the session's credentials.
func TestSubstrateToolAddedLaterRunsAsTheSessionsCaller(t *testing.T) {
	e := env(t, mcp.Options{})
	admin := apitest.Token(t, "ada", auth.PermAdmin)
	changed := make(chan struct{}, 64)
	cs := sessionAs(t, e, mcp.Caller{Authorization: "Bearer " + apitest.Contributor(t, "alice"), Writer: true},
		&sdk.ClientOptions{ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} }})
	b, err := os.ReadFile("../../tools/checksum/tool.json")
	if err != nil {
		t.Fatal(err)
	}
	var manifest map[string]any
	_ = json.Unmarshal(b, &manifest)
	var reg struct{ RegisterTool struct{ ContentHash string } }
	e.OK(t, admin, `mutation($m: JSON!) { registerTool(input: {manifest: $m}) { ... on WriteSuccess { contentHash } } }`, map[string]any{"m": manifest}, &reg)
	e.OK(t, admin, `mutation($h: String!) { updateArtifact(input: {ref: "tool:checksum.sha256", baseContentHash: $h, lifecycleState: "active"}) { __typename } }`,
		map[string]any{"h": reg.RegisterTool.ContentHash}, nil)
	listed(t, cs, changed, func(m map[string]*sdk.Tool) bool { return m["tool.checksum.sha256"] != nil })
	res := call(t, cs, "tool.checksum.sha256", map[string]any{"text": "abc"})
	out, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(out), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
		t.Fatalf("the substrate tool added after the session began: %s %s", text(res), out)
	}
}
