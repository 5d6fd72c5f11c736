package skillcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/skillcall"
)

// Check refuses a runtime_config the packet could not be written from, each
// problem at its manifest path.
func TestCheck(t *testing.T) {
	rt := skillcall.New(checkOnly{})
	cases := map[string]string{
		`{"skill": "lit.review", "instructions": "do it"}`:                                                        "",
		`{"skill": "lit.review", "instructions": "do it", "persona": "skeptic", "max_steps": 3, "budget_usd": 0}`: "",
		`{"instructions": "do it"}`:                                      "runtime_config.skill required",
		`{"skill": "Lit Review", "instructions": "do it"}`:               "runtime_config.skill pattern",
		`{"skill": "lit.review"}`:                                        "runtime_config.instructions required",
		`{"skill": "lit.review", "instructions": "  "}`:                  "runtime_config.instructions required",
		`{"skill": "lit.review", "instructions": "x", "max_steps": 0}`:   "runtime_config.max_steps minimum",
		`{"skill": "lit.review", "instructions": "x", "budget_usd": -1}`: "runtime_config.budget_usd minimum",
		`{"skill": "lit.review", "instructions": "x", "function": "f"}`:  "runtime_config skill_call_config",
		`{"skill": "lit.review", "instructions": "x"} {}`:                "runtime_config skill_call_config",
		``: "runtime_config.skill required",
	}
	for cfg, want := range cases {
		ps := rt.Check(&runtimes.Tool{Name: "t", Runtime: skillcall.Name, Config: json.RawMessage(cfg)})
		got := ""
		if len(ps) > 0 {
			got = ps[0].Path + " " + ps[0].Constraint
		}
		if got != want {
			t.Errorf("%s: first problem %q, want %q (all: %+v)", cfg, got, want, ps)
		}
	}
}

// checkOnly is the store of a runtime that only checks manifests: Check
// never reads or writes.
type checkOnly struct{ skillcall.Packets }

// Run writes one packet per call, as the caller, naming the call: a retry of
// the call (its worker died after the write) finds that packet instead of
// writing another; a cancelled call writes nothing; a bad runtime_config is
// refused at dispatch too.
func TestRunWritesOnePacketPerCall(t *testing.T) {
	e := apitest.New(t)
	cfg := map[string]any{"skill": "lit.review", "persona": "skeptic", "instructions": "Find counter-evidence.", "budget_usd": 0.25}
	admin := apitest.Token(t, "ada", auth.PermAdmin)
	var reg struct {
		RegisterTool struct{ Ref, ContentHash string }
	}
	e.OK(t, admin, `mutation($m: JSON!) { registerTool(input: {manifest: $m}) { ... on WriteSuccess { ref contentHash } } }`,
		map[string]any{"m": map[string]any{"name": "review", "version": "1.0.0", "summary": "an agent's review", "runtime": skillcall.Name,
			"runtime_config": cfg, "input_schema": map[string]any{"type": "object"}, "output_schema": map[string]any{"type": "object"}}}, &reg)
	e.OK(t, admin, `mutation($h: String!) { updateArtifact(input: {ref: "tool:review", baseContentHash: $h, lifecycleState: "active"}) { __typename } }`,
		map[string]any{"h": reg.RegisterTool.ContentHash}, nil)
	var inv struct {
		InvokeTool struct{ ArtifactID, Status, ResultRef string }
	}
	e.OK(t, apitest.Contributor(t, "alice"), `mutation { invokeTool(input: {name: "review", args: {query: "TREM2"}}) { ... on ToolCall { artifactId status resultRef } } }`, nil, &inv)
	if inv.InvokeTool.Status != "QUEUED" || inv.InvokeTool.ResultRef != skillcall.PacketType+":"+inv.InvokeTool.ArtifactID {
		t.Fatalf("invoke: %+v", inv.InvokeTool)
	}
	r, _ := ref.Parse(inv.InvokeTool.ResultRef)
	a, err := e.Store.Get(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	_ = json.Unmarshal(a.Content, &got)
	_ = json.Unmarshal([]byte(`{"skill_name": "lit.review", "persona": "skeptic", "instructions": "Find counter-evidence.",
		"inputs": {"query": "TREM2"}, "budget": {"max_usd": 0.25}, "status": "open", "tool_call": "tool_call:`+inv.InvokeTool.ArtifactID+`"}`), &want)
	if g := mustJSON(got); string(g) != string(mustJSON(want)) {
		t.Fatalf("packet content %s", g)
	}
	if a.CreatedBy != "alice" {
		t.Fatalf("the packet is %s's, not the caller's", a.CreatedBy)
	}

	rt := skillcall.New(workpacket.Writer(e.Store))
	rc := request.System("test", time.Now())
	rc.Actor = auth.Actor{ID: "alice", Kind: auth.KindHuman, Permissions: []auth.Permission{auth.PermContributor}}
	ctx := request.With(context.Background(), rc)
	tool := &runtimes.Tool{Name: "review", Runtime: skillcall.Name, Caps: runtimes.Caps{WallTime: time.Minute}, Config: mustJSON(cfg)}
	call := &runtimes.Call{Tool: tool, Args: json.RawMessage(`{"query":"TREM2"}`), ID: inv.InvokeTool.ArtifactID, Actor: "alice"}
	again, err := rt.Run(ctx, call)
	if err != nil || !again.Pending || again.ResultRef != inv.InvokeTool.ResultRef {
		t.Fatalf("a retried call: %+v, %v", again, err)
	}
	if n := e.Count(t, "artifacts WHERE type = 'agent_work_packet'"); n != 1 {
		t.Fatalf("%d packets for one call", n)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	other := *call
	other.ID = uuid.Must(uuid.NewV7()).String()
	_, err = rt.Run(cancelled, &other)
	var re *runtimes.Error
	if !errors.As(err, &re) || re.Code != runtimes.CodeCancelled {
		t.Fatalf("a cancelled call: %v", err)
	}
	if n := e.Count(t, "artifacts WHERE type = 'agent_work_packet'"); n != 1 {
		t.Fatalf("a cancelled call wrote a packet (%d)", n)
	}

	bad := *tool
	bad.Config = json.RawMessage(`{"skill": "lit.review"}`)
	_, err = rt.Run(ctx, &runtimes.Call{Tool: &bad, Args: json.RawMessage(`{}`), ID: uuid.Must(uuid.NewV7()).String()})
	if !errors.As(err, &re) || re.Code != runtimes.CodeRefused || !re.Setup {
		t.Fatalf("a bad config at dispatch: %v", err)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
