package dispatch_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/server"
)

// clock is a server clock a test moves forward: leases are measured on the
// request's clock, so a lease lapses when the test says, without sleeping.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// packetEnv is a server with the default runtimes (in_process and
// skill_call), on clk, with a skill_call tool review.skeptic active.
func packetEnv(t *testing.T, clk *clock) *apitest.Env {
	t.Helper()
	e := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.Now = clk.Now }})
	activate(t, e, skillTool())
	return e
}

func skillTool() map[string]any {
	return map[string]any{
		"name": "review.skeptic", "version": "1.0.0", "summary": "A skeptic's evidence review, done by an agent.", "runtime": "skill_call",
		"runtime_config": map[string]any{"skill": "literature.evidence_review", "persona": "skeptic",
			"instructions": "Find evidence against the claim; hand back a hypothesis artifact.", "max_steps": 20, "budget_usd": 0.5},
		"input_schema": map[string]any{"type": "object", "required": []any{"query"}, "properties": map[string]any{"query": map[string]any{"type": "string"}}},
		"output_schema": map[string]any{"type": "object", "required": []any{"result_refs"}, "properties": map[string]any{
			"result_refs": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, "summary": map[string]any{"type": "string"}}},
		"cost_model": map[string]any{"fixed_usd": 0.01},
	}
}

var (
	carol = func(t *testing.T) string { return apitest.Contributor(t, "carol") }
	dave  = func(t *testing.T) string { return apitest.Contributor(t, "dave") }
)

const packetOnly = `__typename
  ... on AgentWorkPacket { artifactId ref status claimedBy leaseExpiresAt resultRef resultRefs resultSummary toolCall progress
    skillName persona instructions inputs budget maxSteps call { status resultRef } }`

const packetFields = packetOnly + `
  ... on VersionConflict { current { ... on AgentWorkPacket { claimedBy } } retryAfterMs }
  ... on ValidationFailed { problems { path constraint message } }
  ... on Problem { code message }`

type packetOut struct {
	Typename       string `json:"__typename"`
	ArtifactID     string
	Ref            string
	Status         string
	ClaimedBy      *string
	LeaseExpiresAt *string
	ResultRef      *string
	ResultRefs     []string
	ResultSummary  *string
	ToolCall       *string
	Progress       json.RawMessage
	SkillName      string
	Persona        string
	Instructions   string
	Inputs         json.RawMessage
	Budget         json.RawMessage
	MaxSteps       int
	Call           *struct {
		Status    string
		ResultRef *string
	}
	Current  *struct{ ClaimedBy string }
	Problems []struct{ Path, Constraint, Message string }
	Code     string
	Message  string
}

func packet(t *testing.T, e *apitest.Env, token, ref string) packetOut {
	t.Helper()
	var out struct{ Artifact packetOut }
	e.OK(t, token, `query($r: Ref!) { artifact(ref: $r) { `+packetOnly+` } }`, map[string]any{"r": ref}, &out)
	return out.Artifact
}

func claim(t *testing.T, e *apitest.Env, token string, ref string, lease int) packetOut {
	t.Helper()
	in := map[string]any{}
	if ref != "" {
		in["ref"] = ref
	}
	if lease > 0 {
		in["leaseSeconds"] = lease
	}
	var out struct{ ClaimWorkPacket packetOut }
	e.OK(t, token, `mutation($in: ClaimWorkPacketInput!) { claimWorkPacket(input: $in) { `+packetFields+` } }`, map[string]any{"in": in}, &out)
	return out.ClaimWorkPacket
}

func complete(t *testing.T, e *apitest.Env, token string, in map[string]any) packetOut {
	t.Helper()
	var out struct{ CompleteWorkPacket packetOut }
	e.OK(t, token, `mutation($in: CompleteWorkPacketInput!) { completeWorkPacket(input: $in) { `+packetFields+` } }`, map[string]any{"in": in}, &out)
	return out.CompleteWorkPacket
}

func claimable(t *testing.T, e *apitest.Env, token string) []string {
	t.Helper()
	var out struct {
		WorkPackets struct {
			Edges []struct{ Node struct{ ArtifactID string } }
		}
	}
	e.OK(t, token, `{ workPackets { edges { node { artifactId } } } }`, nil, &out)
	ids := []string{}
	for _, ed := range out.WorkPackets.Edges {
		ids = append(ids, ed.Node.ArtifactID)
	}
	return ids
}

// result creates an artifact for an agent to hand back.
func result(t *testing.T, e *apitest.Env, token string) string {
	t.Helper()
	var out struct{ CreateArtifact struct{ Ref string } }
	e.OK(t, token, `mutation { createArtifact(input: {type: "hypothesis", title: "TREM2 R47H effect is stage-dependent", content: {}}) {
	  ... on WriteSuccess { ref } } }`, nil, &out)
	if out.CreateArtifact.Ref == "" {
		t.Fatal("no result artifact")
	}
	return out.CreateArtifact.Ref
}

// The whole lifecycle: a skill_call call is QUEUED with an open packet; of
// two agents claiming it one wins; the winner reports progress and completes
// it with a result, which finishes the call SUCCEEDED with that result; a
// second completion is refused, and nobody writes the packet's status by hand.
func TestSkillCallLifecycle(t *testing.T) {
	clk := &clock{}
	e := packetEnv(t, clk)
	c := invoke(t, e, alice(t), "review.skeptic", map[string]any{"query": "TREM2 R47H phagocytosis"})
	if c.Typename != "ToolCall" || c.Status != "QUEUED" || c.ResultRef == nil || *c.ResultRef != "agent_work_packet:"+c.ArtifactID {
		t.Fatalf("skill_call: %+v", c)
	}
	if c.DurationMs != nil || c.CostUsd != nil {
		t.Fatalf("a waiting call is not finished nor costed yet: %+v", c)
	}
	p := packet(t, e, bob(t), *c.ResultRef)
	if p.Status != "OPEN" || p.SkillName != "literature.evidence_review" || p.Persona != "skeptic" || p.MaxSteps != 20 ||
		!strings.HasPrefix(p.Instructions, "Find evidence") || string(p.Inputs) != `{"query":"TREM2 R47H phagocytosis"}` ||
		string(p.Budget) != `{"max_usd":0.5}` || p.ToolCall == nil || *p.ToolCall != "tool_call:"+c.ArtifactID ||
		p.Call != nil {
		t.Fatalf("packet: %+v", p)
	}
	// The call is its caller's and the tool owner's: the agent sees the ref,
	// alice the call.
	if p := packet(t, e, alice(t), *c.ResultRef); p.Call == nil || p.Call.Status != "QUEUED" {
		t.Fatalf("the caller's view of the packet: %+v", p)
	}
	if got := strings.Join(eventTypes(t, e, alice(t), c.ArtifactID), ","); got != "tool_call.started,tool_call.waiting" {
		t.Fatalf("events of the waiting call: %s", got)
	}
	if ids := claimable(t, e, bob(t)); len(ids) != 1 || ids[0] != p.ArtifactID {
		t.Fatalf("bob may claim %v, want [%s]", ids, p.ArtifactID)
	}

	// Two agents claim at once: one wins, the other is told who holds it.
	var wg sync.WaitGroup
	got := map[string]packetOut{}
	var mu sync.Mutex
	for _, who := range []string{"bob", "carol"} {
		tok := apitest.Contributor(t, who)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := claim(t, e, tok, *c.ResultRef, 0)
			mu.Lock()
			got[who] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	winner, loser, loserTok := "bob", "carol", carol(t)
	if got["bob"].Typename != "AgentWorkPacket" {
		winner, loser, loserTok = "carol", "bob", bob(t)
	}
	w, l := got[winner], got[loser]
	if w.Typename != "AgentWorkPacket" || w.Status != "CLAIMED" || w.ClaimedBy == nil || *w.ClaimedBy != winner || w.LeaseExpiresAt == nil {
		t.Fatalf("winner %s: %+v", winner, w)
	}
	if l.Typename != "VersionConflict" || l.Current == nil || l.Current.ClaimedBy != winner {
		t.Fatalf("loser %s: %+v", loser, l)
	}
	winTok := apitest.Contributor(t, winner)
	if ids := claimable(t, e, loserTok); len(ids) != 0 {
		t.Fatalf("a held packet is still claimable: %v", ids)
	}

	// Progress reaches the call's followers.
	var prog struct{ ReportWorkPacketProgress packetOut }
	e.OK(t, winTok, `mutation($r: Ref!) { reportWorkPacketProgress(input: {ref: $r, fraction: 0.5, message: "read 12 papers"}) { `+packetFields+` } }`,
		map[string]any{"r": *c.ResultRef}, &prog)
	if prog.ReportWorkPacketProgress.Typename != "AgentWorkPacket" || string(prog.ReportWorkPacketProgress.Progress) != `{"fraction":0.5,"message":"read 12 papers"}` {
		t.Fatalf("progress: %+v", prog.ReportWorkPacketProgress)
	}

	res := result(t, e, winTok)
	done := map[string]any{"ref": *c.ResultRef, "status": "DONE", "resultRefs": []string{res}, "summary": "3 papers disagree", "spent": map[string]any{"usd": 0.2, "steps": 7}}
	if r := complete(t, e, loserTok, done); r.Typename != "PermissionDenied" {
		t.Fatalf("the loser completed the packet: %+v", r)
	}
	r := complete(t, e, winTok, done)
	if r.Typename != "AgentWorkPacket" || r.Status != "DONE" || r.ResultRef == nil || *r.ResultRef != res ||
		len(r.ResultRefs) != 1 || r.ResultSummary == nil || r.Call != nil {
		t.Fatalf("complete: %+v", r)
	}
	// The agent finished a call it may not read; its caller sees it succeeded.
	if p := packet(t, e, alice(t), *c.ResultRef); p.Call == nil || p.Call.Status != "SUCCEEDED" {
		t.Fatalf("the caller's view of the completed packet: %+v", p)
	}
	var call struct {
		ToolCall struct {
			Status     string
			ResultRef  string
			Result     json.RawMessage
			CostUsd    float64
			DurationMs *int
		}
	}
	e.OK(t, alice(t), `query($id: ID!) { toolCall(id: $id) { status resultRef result costUsd durationMs } }`, map[string]any{"id": c.ArtifactID}, &call)
	if call.ToolCall.Status != "SUCCEEDED" || call.ToolCall.ResultRef != res || call.ToolCall.DurationMs == nil ||
		string(call.ToolCall.Result) != `{"result_refs":["`+res+`"],"summary":"3 papers disagree"}` || call.ToolCall.CostUsd != 0.21 {
		t.Fatalf("the finished call: %+v", call.ToolCall)
	}
	if got := strings.Join(eventTypes(t, e, alice(t), c.ArtifactID), ","); got != "tool_call.started,tool_call.waiting,tool_call.progress,tool_call.completed" {
		t.Fatalf("events of the call: %s", got)
	}
	var debit struct {
		Poll struct {
			Events []struct {
				Payload struct {
					Actor     string
					AmountUSD float64 `json:"amount_usd"`
				}
			}
		}
	}
	e.OK(t, alice(t), `{ poll(types: ["agent.budget_debited"], from: START) { events { payload } } }`, nil, &debit)
	if ev := debit.Poll.Events; len(ev) != 1 || ev[0].Payload.Actor != "alice" || ev[0].Payload.AmountUSD != 0.21 {
		t.Fatalf("the caller's debit: %+v", ev)
	}

	// The agent's result is stamped as produced through the skill_call tool.
	var stamped int
	if err := e.Pool.QueryRow(t.Context(), `SELECT count(*) FROM provenance_edges pe JOIN artifacts a ON a.pk = pe.source_pk
		WHERE a.type || ':' || a.id = split_part($1, '@', 1) AND pe.predicate = 'produced_by_tool'`, res).Scan(&stamped); err != nil {
		t.Fatal(err)
	}
	if stamped != 1 {
		t.Fatalf("%d produced_by_tool stamps on the result", stamped)
	}
	if r := complete(t, e, winTok, done); r.Typename != "LifecycleViolation" {
		t.Fatalf("completed twice: %+v", r)
	}
	if r := claim(t, e, dave(t), *c.ResultRef, 0); r.Typename != "LifecycleViolation" {
		t.Fatalf("claimed a done packet: %+v", r)
	}
}

// A client cannot move a packet's status itself: status is written only by
// the lifecycle's operations (policy.server_fields), even by its owner.
func TestWorkPacketStatusIsServerWritten(t *testing.T) {
	e := packetEnv(t, &clock{})
	c := invoke(t, e, alice(t), "review.skeptic", map[string]any{"query": "q"})
	var cur struct{ Artifact struct{ ContentHash string } }
	e.OK(t, alice(t), `query($r: Ref!) { artifact(ref: $r) { contentHash } }`, map[string]any{"r": *c.ResultRef}, &cur)
	var out struct{ UpdateArtifact packetOut }
	e.OK(t, alice(t), `mutation($r: Ref!, $h: String!) { updateArtifact(input: {ref: $r, baseContentHash: $h, patch: [{op: "replace", path: "/status", value: "done"}]}) {
	  __typename ... on ValidationFailed { problems { path constraint message } } } }`, map[string]any{"r": *c.ResultRef, "h": cur.Artifact.ContentHash}, &out)
	u := out.UpdateArtifact
	if u.Typename != "ValidationFailed" || len(u.Problems) != 1 || u.Problems[0].Path != "content.status" || u.Problems[0].Constraint != "readOnly" {
		t.Fatalf("a client wrote the packet's status: %+v", u)
	}
}

// A lease lapses on the server's clock: the packet is claimable again, the
// agent that let it lapse may no longer complete it, and the new claimant
// may (here: FAILED, which fails the call with the summary as its error).
// The call is asynchronous: the queue's worker writes the packet.
func TestWorkPacketLeaseLapses(t *testing.T) {
	clk := &clock{}
	e := packetEnv(t, clk)
	c := invoke(t, e, alice(t), "review.skeptic", map[string]any{"query": "q"}, map[string]any{"async": true})
	ref := waitPacket(t, e, c.ArtifactID)
	if b := claim(t, e, bob(t), "", 60); b.Typename != "AgentWorkPacket" || b.ArtifactID != c.ArtifactID {
		t.Fatalf("bob claims the next packet: %+v", b)
	}
	if r := claim(t, e, carol(t), "", 0); r.Typename != "NotFound" {
		t.Fatalf("carol claimed with nothing claimable: %+v", r)
	}
	held := func(token string) int {
		var out struct {
			WorkPackets struct {
				Edges []struct{ Node struct{ ArtifactID string } }
			}
		}
		e.OK(t, token, `{ workPackets(status: CLAIMED) { edges { node { artifactId } } } }`, nil, &out)
		return len(out.WorkPackets.Edges)
	}
	if held(bob(t)) != 1 || held(carol(t)) != 0 {
		t.Fatalf("bob holds %d packets, carol %d; want 1 and 0", held(bob(t)), held(carol(t)))
	}
	if r := claim(t, e, carol(t), ref, 0); r.Typename != "VersionConflict" || r.Current == nil || r.Current.ClaimedBy != "bob" {
		t.Fatalf("carol claimed bob's packet: %+v", r)
	}

	clk.advance(61 * time.Second)
	if held(bob(t)) != 0 {
		t.Fatal("bob still holds a packet whose lease lapsed")
	}
	if ids := claimable(t, e, carol(t)); len(ids) != 1 || ids[0] != c.ArtifactID {
		t.Fatalf("after the lease lapsed carol may claim %v", ids)
	}
	if r := claim(t, e, carol(t), "", 0); r.Typename != "AgentWorkPacket" || r.ClaimedBy == nil || *r.ClaimedBy != "carol" {
		t.Fatalf("carol claims the lapsed packet: %+v", r)
	}
	failed := map[string]any{"ref": ref, "status": "FAILED", "resultRefs": []string{}, "summary": "PubMed was unreachable"}
	if r := complete(t, e, bob(t), failed); r.Typename != "PermissionDenied" || !strings.Contains(r.Message, "carol") {
		t.Fatalf("bob completed after his lease lapsed: %+v", r)
	}
	if r := complete(t, e, carol(t), failed); r.Typename != "AgentWorkPacket" || r.Status != "FAILED" {
		t.Fatalf("carol fails the packet: %+v", r)
	}
	var call struct {
		ToolCall struct {
			Status string
			Error  struct{ Code, Message string }
		}
	}
	e.OK(t, alice(t), `query($id: ID!) { toolCall(id: $id) { status error } }`, map[string]any{"id": c.ArtifactID}, &call)
	if call.ToolCall.Status != "FAILED" || call.ToolCall.Error.Message != "PubMed was unreachable" || call.ToolCall.Error.Code != "tool_error" {
		t.Fatalf("the failed call: %+v", call.ToolCall)
	}
	if got := strings.Join(eventTypes(t, e, alice(t), c.ArtifactID), ","); got != "tool_call.queued,tool_call.started,tool_call.waiting,tool_call.failed" {
		t.Fatalf("events of the call: %s", got)
	}
}

// Cancelling a waiting skill_call cancels its packet: no agent claims or
// completes it afterwards.
func TestCancelSkillCall(t *testing.T) {
	e := packetEnv(t, &clock{})
	c := invoke(t, e, alice(t), "review.skeptic", map[string]any{"query": "q"})
	var out struct{ CancelToolCall struct{ Status string } }
	e.OK(t, alice(t), `mutation($id: ID!) { cancelToolCall(input: {id: $id}) { ... on ToolCall { status } } }`, map[string]any{"id": c.ArtifactID}, &out)
	if out.CancelToolCall.Status != "CANCELLED" {
		t.Fatalf("cancel: %+v", out.CancelToolCall)
	}
	if p := packet(t, e, bob(t), *c.ResultRef); p.Status != "CANCELLED" {
		t.Fatalf("the packet of a cancelled call: %+v", p)
	}
	if r := claim(t, e, bob(t), *c.ResultRef, 0); r.Typename != "LifecycleViolation" {
		t.Fatalf("claimed a cancelled packet: %+v", r)
	}
	if ids := claimable(t, e, bob(t)); len(ids) != 0 {
		t.Fatalf("a cancelled packet is claimable: %v", ids)
	}
}

// Bad input names its field; a skill_call manifest without a skill or
// instructions, or with a field it does not know, is refused at registration.
func TestWorkPacketRefusals(t *testing.T) {
	e := packetEnv(t, &clock{})
	if r := claim(t, e, bob(t), "", 0); r.Typename != "NotFound" {
		t.Fatalf("claim from an empty pool: %+v", r)
	}
	if r := claim(t, e, bob(t), "hypothesis:x", 0); r.Typename != "ValidationFailed" || r.Problems[0].Path != "input.ref" {
		t.Fatalf("claim of a non-packet: %+v", r)
	}
	if r := claim(t, e, bob(t), "", 100000); r.Typename != "ValidationFailed" || r.Problems[0].Path != "input.leaseSeconds" {
		t.Fatalf("a lease too long: %+v", r)
	}
	if r := claim(t, e, apitestToken(t, "vic", "viewer"), "", 0); r.Typename != "PermissionDenied" {
		t.Fatalf("a viewer's claim: %+v", r)
	}
	c := invoke(t, e, alice(t), "review.skeptic", map[string]any{"query": "q"})
	claim(t, e, bob(t), *c.ResultRef, 0)
	r := complete(t, e, bob(t), map[string]any{"ref": *c.ResultRef, "status": "DONE", "resultRefs": []string{"hypothesis:absent", "nope"}})
	if r.Typename != "ValidationFailed" || len(r.Problems) != 2 || r.Problems[0].Path != "input.resultRefs.0" || r.Problems[1].Path != "input.resultRefs.1" {
		t.Fatalf("results that do not exist: %+v", r)
	}
	if r := complete(t, e, bob(t), map[string]any{"ref": *c.ResultRef, "status": "DONE", "resultRefs": []string{}}); r.Typename != "ValidationFailed" || r.Problems[0].Path != "input.resultRefs" {
		t.Fatalf("DONE without a result: %+v", r)
	}

	for field, want := range map[string]string{"skill": "content.runtime_config.skill", "instructions": "content.runtime_config.instructions", "+colour": "content.runtime_config"} {
		m := skillTool()
		m["name"] = "review.broken"
		cfg := m["runtime_config"].(map[string]any)
		if name, ok := strings.CutPrefix(field, "+"); ok {
			cfg[name] = "red"
		} else {
			delete(cfg, field)
		}
		reg := register(t, e, alice(t), m).RegisterTool
		if reg.Typename != "ValidationFailed" || len(reg.Problems) == 0 || reg.Problems[0].Path != want {
			t.Errorf("%s: registration %+v, want a problem at %s", field, reg, want)
		}
	}
}

// The shipped skill_call tool registers as a draft for a contributor and,
// active, writes its packet from the call's arguments.
func TestShippedSkillCallTool(t *testing.T) {
	e := packetEnv(t, &clock{})
	m := manifest(t, "evidence_review")
	if r := register(t, e, alice(t), m).RegisterTool; r.Typename != "WriteSuccess" || r.Artifact.LifecycleState != "draft" {
		t.Fatalf("a contributor registers it: %+v", r)
	}
	activate(t, e, m)
	args := map[string]any{"target": "hypothesis:x", "query": "TREM2 R47H"}
	c := invoke(t, e, alice(t), "literature.evidence_review", args, map[string]any{"async": true})
	if c.Typename != "ToolCall" || c.Status != "QUEUED" {
		t.Fatalf("invoke: %+v", c)
	}
	p := packet(t, e, bob(t), waitPacket(t, e, c.ArtifactID))
	if p.Status != "OPEN" || p.SkillName != "literature.evidence_review" || string(p.Inputs) != `{"query":"TREM2 R47H","target":"hypothesis:x"}` {
		t.Fatalf("packet: %+v", p)
	}
}

// waitPacket waits until the queue's worker has written a queued
// skill_call's packet, and returns the packet's ref.
func waitPacket(t *testing.T, e *apitest.Env, id string) string {
	t.Helper()
	var packet string
	until(t, e, "tool_call:"+id, "the queued skill_call "+id+" writes its packet", func() bool {
		var out struct{ ToolCall struct{ ResultRef *string } }
		e.OK(t, alice(t), `query($id: ID!) { toolCall(id: $id) { resultRef } }`, map[string]any{"id": id}, &out)
		if out.ToolCall.ResultRef != nil {
			packet = *out.ToolCall.ResultRef
		}
		return packet != ""
	})
	return packet
}

// Every mutation around a call takes an idempotency key: the same key again
// answers as the first request did, without writing; with other input it is
// IdempotencyKeyReuse.
func TestWorkPacketMutationsAreIdempotent(t *testing.T) {
	e := packetEnv(t, &clock{})
	invokeSkill := func(t *testing.T, e *apitest.Env) call {
		return invoke(t, e, alice(t), "review.skeptic", map[string]any{"query": "TREM2"})
	}
	c := invokeSkill(t, e)
	tok := apitest.Contributor(t, "agent-k")
	const claimQ = `mutation($r: Ref, $k: String) { claimWorkPacket(input: {ref: $r, idempotencyKey: $k}) { __typename ... on AgentWorkPacket { contentHash status } } }`
	type claimed struct {
		ClaimWorkPacket struct {
			Typename    string `json:"__typename"`
			ContentHash string
			Status      string
		}
	}
	var a, b claimed
	e.OK(t, tok, claimQ, map[string]any{"r": *c.ResultRef, "k": "claim-1"}, &a)
	e.OK(t, tok, claimQ, map[string]any{"r": *c.ResultRef, "k": "claim-1"}, &b)
	if a.ClaimWorkPacket.Status != "CLAIMED" || a != b {
		t.Fatalf("replayed claim: %+v vs %+v", a, b)
	}
	res := result(t, e, tok)
	done := map[string]any{"ref": *c.ResultRef, "status": "DONE", "resultRefs": []string{res}, "idempotencyKey": "done-1"}
	first := complete(t, e, tok, done)
	again := complete(t, e, tok, done)
	if first.Typename != "AgentWorkPacket" || again.Typename != "AgentWorkPacket" || first.Status != "DONE" || again.Status != "DONE" {
		t.Fatalf("replayed completion: %+v then %+v", first, again)
	}
	done["summary"] = "something else"
	if r := complete(t, e, tok, done); r.Typename != "IdempotencyKeyReuse" {
		t.Fatalf("the key with other input: %+v", r)
	}
	const cancelQ = `mutation($id: ID!, $k: String) { cancelToolCall(input: {id: $id, idempotencyKey: $k}) { __typename ... on ToolCall { status } } }`
	var x, y struct {
		CancelToolCall struct {
			Typename string `json:"__typename"`
			Status   string
		}
	}
	c2 := invokeSkill(t, e)
	e.OK(t, alice(t), cancelQ, map[string]any{"id": c2.ArtifactID, "k": "cancel-1"}, &x)
	e.OK(t, alice(t), cancelQ, map[string]any{"id": c2.ArtifactID, "k": "cancel-1"}, &y)
	if x.CancelToolCall.Status != "CANCELLED" || x != y {
		t.Fatalf("replayed cancel: %+v then %+v", x, y)
	}
}
