package mcp_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/mcp"
)

// The debate verbs are listed as tool.debate.start and tool.debate.replay
// (and tool.debate.argue) and answer over MCP: a debate started, its first
// turn's packet claimed and answered, and the replay shows the round.
func TestDebateTools(t *testing.T) {
	e := env(t, mcp.Options{Mutations: mcp.MutationsAll})
	ada := apitest.Contributor(t, "ada")
	cs := mustConnect(t, e, ada)
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range lt.Tools {
		names[tl.Name] = true
	}
	for _, n := range []string{"tool.debate.start", "tool.debate.argue", "tool.debate.replay"} {
		if !names[n] {
			t.Fatalf("%s is not listed", n)
		}
	}
	res := call(t, cs, "tool.debate.start", map[string]any{"topic": "Is R47H loss of function?", "personas": []string{"theorist", "skeptic"}, "k": 1})
	out, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		t.Fatalf("start: %s", text(res))
	}
	refs := regexp.MustCompile(`(debate_session|agent_work_packet):[0-9a-f-]{36}`).FindAllString(string(out), -1)
	var session, packet string
	for _, r := range refs {
		if strings.HasPrefix(r, "debate_session:") && session == "" {
			session = r
		}
		if strings.HasPrefix(r, "agent_work_packet:") && packet == "" {
			packet = r
		}
	}
	if session == "" || packet == "" {
		t.Fatalf("start answered %s", out)
	}
	var claimed struct{ ClaimWorkPacket struct{ Status string } }
	agent := apitest.Contributor(t, "agent-theorist")
	e.OK(t, agent, `mutation($r: Ref) { claimWorkPacket(input: {ref: $r}) { ... on AgentWorkPacket { status } } }`, map[string]any{"r": packet}, &claimed)
	if claimed.ClaimWorkPacket.Status != "CLAIMED" {
		t.Fatalf("claim: %+v", claimed)
	}
	as := mustConnect(t, e, agent)
	if res := call(t, as, "tool.debate.argue", map[string]any{"packet": packet, "argument": "R47H lowers ligand binding.", "citations": []string{"PMID:23150908"}}); res.IsError {
		t.Fatalf("argue: %s", text(res))
	}
	res = call(t, cs, "tool.debate.replay", map[string]any{"session": session})
	out, _ = json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(out), "R47H lowers ligand binding.") || !strings.Contains(string(out), "agent-theorist") ||
		!strings.Contains(string(out), `"persona":"skeptic"`) {
		t.Fatalf("replay: %s %s", text(res), out)
	}
	// A bad argument is refused naming it.
	if res := call(t, cs, "tool.debate.start", map[string]any{"topic": "T", "personas": []string{"a"}, "k": 11}); !res.IsError || !strings.Contains(text(res), "k") {
		t.Errorf("k 11: %s", text(res))
	}
}
