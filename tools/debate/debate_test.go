package debate_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

const invokeQ = `mutation($n: String!, $a: JSON!) { invokeTool(input: {name: $n, args: $a}) {
  __typename
  ... on ToolCall { artifactId status result resultRef error }
  ... on ValidationFailed { problems { path constraint message } }
  ... on Problem { code message } } }`

type call struct {
	Typename   string `json:"__typename"`
	ArtifactID string
	Status     string
	Result     json.RawMessage
	ResultRef  *string
	Error      *struct{ Code, Message string }
	Problems   []struct{ Path, Constraint, Message string }
	Code       string
	Message    string
}

func invoke(t *testing.T, e *apitest.Env, token, name string, args any) call {
	t.Helper()
	var out struct{ InvokeTool call }
	e.OK(t, token, invokeQ, map[string]any{"n": name, "a": args}, &out)
	return out.InvokeTool
}

// ok invokes and wants a succeeded call, decoding its result into v.
func ok(t *testing.T, e *apitest.Env, token, name string, args any, v any) {
	t.Helper()
	c := invoke(t, e, token, name, args)
	if c.Status != "SUCCEEDED" {
		t.Fatalf("%s: %+v %+v", name, c, c.Error)
	}
	if err := json.Unmarshal(c.Result, v); err != nil {
		t.Fatalf("%s result %s: %v", name, c.Result, err)
	}
}

type packet struct {
	Typename string `json:"__typename"`
	Ref      string
	Status   string
	Inputs   struct {
		Session    string
		Turn       int
		Round      int
		Persona    string
		Topic      string
		Synthesis  bool
		Transcript []struct {
			Persona, Actor, Argument string
			Citations                []string
		}
	}
	Code    string
	Message string
}

const claimQ = `mutation($r: Ref) { claimWorkPacket(input: {ref: $r}) { __typename
  ... on AgentWorkPacket { ref status inputs } ... on Problem { code message } } }`

func claim(t *testing.T, e *apitest.Env, token, ref string) packet {
	t.Helper()
	var out struct{ ClaimWorkPacket packet }
	e.OK(t, token, claimQ, map[string]any{"r": ref}, &out)
	return out.ClaimWorkPacket
}

type startOut struct {
	Session, Packet string
	Turns           int
}

type argueOut struct {
	Session, Round string
	NextPacket     *string `json:"next_packet"`
	Concluded      bool
}

type replayOut struct {
	Session, Topic, State string
	Rounds                []struct {
		Ref, Persona, Actor, Argument string
		Turn, Round                   int
		Citations                     []string
		Packet                        string
	}
	Synthesis *struct {
		Synthesis, Verdict, Actor string
		NewQuestions              []string `json:"new_questions"`
	}
	Next *struct {
		Turn    int
		Persona string
		Packet  string
	}
}

func hypothesis(t *testing.T, e *apitest.Env, token string) string {
	t.Helper()
	var created struct{ CreateArtifact struct{ Ref string } }
	e.OK(t, token, `mutation { createArtifact(input: {type: "hypothesis", title: "TREM2 R47H lowers microglial phagocytosis",
	  content: {target_gene: "TREM2", mechanism: "R47H lowers ligand binding, and with it the phagocytosis of amyloid-beta by microglia."}}) {
	  ... on WriteSuccess { ref } } }`, nil, &created)
	return created.CreateArtifact.Ref
}

// A debate of two personas over two rounds: four rounds answered by agents
// claiming their packets over GraphQL, in order, then the synthesis, which
// concludes the session; the session's readers see every round's event and
// the conclusion, and replay gives the transcript.
func TestDebateOverTheAPI(t *testing.T) {
	e := apitest.New(t)
	alice := apitest.Contributor(t, "alice")
	reader := apitest.Contributor(t, "reader")
	agents := map[string]string{"theorist": apitest.Contributor(t, "agent-theorist"), "skeptic": apitest.Contributor(t, "agent-skeptic"),
		"synthesizer": apitest.Contributor(t, "agent-synth")}
	h := hypothesis(t, e, alice)

	var st startOut
	ok(t, e, alice, "debate.start", map[string]any{"topic": "Does TREM2 R47H act through reduced phagocytosis?",
		"personas": []string{"theorist", "skeptic"}, "k": 2, "about": h}, &st)
	if !strings.HasPrefix(st.Session, "debate_session:") || !strings.HasPrefix(st.Packet, "agent_work_packet:") || st.Turns != 5 {
		t.Fatalf("start: %+v", st)
	}
	var links struct {
		Artifact struct {
			State   string `json:"lifecycleState"`
			Content struct {
				Question  string
				MaxRounds int `json:"max_rounds"`
			}
			Links struct {
				Edges []struct {
					Node struct {
						Predicate string
						To        struct{ Ref string }
					}
				}
			}
		}
	}
	e.OK(t, reader, `query($r: Ref!) { artifact(ref: $r) { lifecycleState content links(predicates: ["about"]) { edges { node { predicate to { ref } } } } } }`,
		map[string]any{"r": st.Session}, &links)
	if a := links.Artifact; a.State != "open" || a.Content.MaxRounds != 2 || len(a.Links.Edges) != 1 || !strings.HasPrefix(a.Links.Edges[0].Node.To.Ref, strings.SplitN(h, "@", 2)[0]) {
		t.Fatalf("session: %+v", a)
	}

	want := []string{"theorist", "skeptic", "theorist", "skeptic"}
	next := st.Packet
	for i, persona := range want {
		p := claim(t, e, agents[persona], next)
		if p.Typename != "AgentWorkPacket" || p.Inputs.Persona != persona || p.Inputs.Turn != i+1 || p.Inputs.Round != i/2+1 ||
			p.Inputs.Session != st.Session || len(p.Inputs.Transcript) != i || p.Inputs.Synthesis {
			t.Fatalf("turn %d packet: %+v", i+1, p)
		}
		var a argueOut
		ok(t, e, agents[persona], "debate.argue", map[string]any{"packet": next, "argument": persona + " argues turn " + string(rune('1'+i)) + " [PMID:23150908]",
			"citations": []string{"PMID:23150908"}}, &a)
		if a.NextPacket == nil || *a.NextPacket == next || a.Concluded {
			t.Fatalf("turn %d: %+v", i+1, a)
		}
		next = *a.NextPacket
	}
	var mid replayOut
	ok(t, e, reader, "debate.replay", map[string]any{"session": st.Session}, &mid)
	if len(mid.Rounds) != 4 || mid.Synthesis != nil || mid.Next == nil || mid.Next.Persona != "synthesizer" || mid.Next.Packet != next || mid.State != "open" {
		t.Fatalf("replay while running: %+v", mid)
	}

	p := claim(t, e, agents["synthesizer"], next)
	if !p.Inputs.Synthesis || p.Inputs.Persona != "synthesizer" || len(p.Inputs.Transcript) != 4 || p.Inputs.Transcript[1].Actor != "agent-skeptic" {
		t.Fatalf("synthesis packet: %+v", p)
	}
	var fin argueOut
	ok(t, e, agents["synthesizer"], "debate.argue", map[string]any{"packet": next, "synthesis": "They agree R47H weakens binding; disagree on the route.",
		"verdict": "inconclusive", "new_questions": []string{"Does R47H reduce microglial survival near plaques?"}}, &fin)
	if !fin.Concluded || fin.NextPacket != nil {
		t.Fatalf("synthesis: %+v", fin)
	}

	var r replayOut
	ok(t, e, reader, "debate.replay", map[string]any{"session": st.Session}, &r)
	if r.State != "concluded" || len(r.Rounds) != 4 || r.Synthesis == nil || r.Synthesis.Verdict != "inconclusive" || r.Synthesis.Actor != "agent-synth" ||
		len(r.Synthesis.NewQuestions) != 1 || r.Next != nil {
		t.Fatalf("replay: %+v", r)
	}
	for i, rd := range r.Rounds {
		if rd.Persona != want[i] || rd.Actor != "agent-"+want[i] || rd.Turn != i+1 || rd.Round != i/2+1 || len(rd.Citations) != 1 ||
			!strings.HasPrefix(rd.Ref, "debate_round:") || !strings.Contains(rd.Argument, want[i]) {
			t.Errorf("round %d: %+v", i+1, rd)
		}
	}

	// The reader follows the session's events: four rounds, then the
	// conclusion, in that order.
	var poll struct {
		Poll struct {
			Events []struct {
				Type    string
				Ref     string
				Payload struct {
					Persona string
					Turn    int
				}
			}
		}
	}
	e.OK(t, reader, `query { poll(types: ["debate.*"], from: START) { events { type ref payload } } }`, nil, &poll)
	var got []string
	for _, ev := range poll.Poll.Events {
		got = append(got, ev.Type+":"+ev.Payload.Persona)
	}
	if strings.Join(got, ",") != "debate.round_completed:theorist,debate.round_completed:skeptic,debate.round_completed:theorist,debate.round_completed:skeptic,debate.round_completed:synthesizer,debate.concluded:" {
		t.Errorf("events: %v", got)
	}
}

// What a hostile agent tries is refused, naming the field, and appends
// nothing.
func TestDebateRefusals(t *testing.T) {
	e := apitest.New(t)
	alice := apitest.Contributor(t, "alice")
	agent, other := apitest.Contributor(t, "agent-1"), apitest.Contributor(t, "agent-2")

	for _, tc := range []struct {
		name string
		args map[string]any
		path string
	}{
		{"no personas", map[string]any{"topic": "T", "personas": []string{}, "k": 1}, "input.args.personas"},
		{"nine personas", map[string]any{"topic": "T", "personas": []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, "k": 1}, "input.args.personas"},
		{"twice the same", map[string]any{"topic": "T", "personas": []string{"a", "a"}, "k": 1}, "input.args.personas"},
		{"k zero", map[string]any{"topic": "T", "personas": []string{"a"}, "k": 0}, "input.args.k"},
		{"k eleven", map[string]any{"topic": "T", "personas": []string{"a"}, "k": 11}, "input.args.k"},
		{"blank topic", map[string]any{"topic": "  ", "personas": []string{"a"}, "k": 1}, "input.args.topic"},
		{"long topic", map[string]any{"topic": strings.Repeat("x", 2001), "personas": []string{"a"}, "k": 1}, "input.args.topic"},
		{"synthesizer speaks", map[string]any{"topic": "T", "personas": []string{"a", "synthesizer"}, "k": 1}, "input.args.personas.1"},
	} {
		c := invoke(t, e, alice, "debate.start", tc.args)
		if c.Typename != "ValidationFailed" || len(c.Problems) == 0 || !strings.HasPrefix(c.Problems[0].Path, tc.path) {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
	if c := invoke(t, e, alice, "debate.start", map[string]any{"topic": "T", "personas": []string{"a"}, "k": 1, "about": "hypothesis:nope"}); c.Status != "FAILED" || !strings.Contains(c.Error.Message, "input.args.about") {
		t.Errorf("about a missing hypothesis: %+v %+v", c, c.Error)
	}
	if n := e.Count(t, "artifacts WHERE type = 'debate_session' AND is_latest"); n != 0 {
		t.Fatalf("%d sessions after refusals", n)
	}
	// Anonymous callers invoke nothing.
	if r := e.Post(t, "", invokeQ, map[string]any{"n": "debate.start", "a": map[string]any{"topic": "T", "personas": []string{"a"}, "k": 1}}); !strings.Contains(string(r.Raw), "contributor") && !strings.Contains(string(r.Raw), "UNAUTHENTICATED") && !strings.Contains(string(r.Raw), "PERMISSION_DENIED") {
		t.Errorf("anonymous start: %s", r.Raw)
	}

	var st startOut
	ok(t, e, alice, "debate.start", map[string]any{"topic": "T", "personas": []string{"theorist"}, "k": 1}, &st)
	// Answering a packet nobody claimed, or one another agent holds.
	if c := invoke(t, e, agent, "debate.argue", map[string]any{"packet": st.Packet, "argument": "A"}); c.Status != "FAILED" || !strings.Contains(c.Error.Message, "claim") {
		t.Errorf("unclaimed: %+v %+v", c, c.Error)
	}
	// A packet forged by invoking debate.turn directly is no turn of the
	// session.
	forgedTurn := invoke(t, e, other, "debate.turn", map[string]any{"session": st.Session, "turn": 1, "round": 1, "persona": "theorist", "topic": "T", "transcript": []any{}})
	if forgedTurn.ResultRef == nil {
		t.Fatalf("debate.turn: %+v", forgedTurn)
	}
	claim(t, e, other, *forgedTurn.ResultRef)
	if c := invoke(t, e, other, "debate.argue", map[string]any{"packet": *forgedTurn.ResultRef, "argument": "A"}); c.Status != "FAILED" || !strings.Contains(c.Error.Message, "input.args.packet") {
		t.Errorf("forged packet: %+v %+v", c, c.Error)
	}
	claim(t, e, agent, st.Packet)
	if c := invoke(t, e, other, "debate.argue", map[string]any{"packet": st.Packet, "argument": "A"}); c.Status != "FAILED" || !strings.Contains(c.Error.Message, "only the claimant") {
		t.Errorf("non-claimant: %+v %+v", c, c.Error)
	}
	// A missing or oversized argument.
	if c := invoke(t, e, agent, "debate.argue", map[string]any{"packet": st.Packet, "citations": []string{"PMID:1"}}); c.Status != "FAILED" || !strings.Contains(c.Error.Message, "input.args.argument") {
		t.Errorf("missing argument: %+v %+v", c, c.Error)
	}
	if c := invoke(t, e, agent, "debate.argue", map[string]any{"packet": st.Packet, "argument": strings.Repeat("x", 8001)}); c.Typename != "ValidationFailed" || c.Problems[0].Path != "input.args.argument" {
		t.Errorf("oversized argument: %+v", c)
	}
	if c := invoke(t, e, agent, "debate.argue", map[string]any{"packet": st.Packet, "argument": "A", "citations": make([]string, 33)}); c.Typename != "ValidationFailed" || c.Problems[0].Path != "input.args.citations" {
		t.Errorf("too many citations: %+v", c)
	}
	if n := e.Count(t, "artifacts WHERE type = 'debate_round'"); n != 0 {
		t.Fatalf("%d rounds after refusals", n)
	}

	// Two answers to one packet at once: one round, one next packet.
	var wg sync.WaitGroup
	results := make([]call, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out struct{ InvokeTool call }
			r := e.Post(t, agent, invokeQ, map[string]any{"n": "debate.argue", "a": map[string]any{"packet": st.Packet, "argument": "A", "citations": []string{}}})
			_ = json.Unmarshal(r.Data, &out)
			results[i] = out.InvokeTool
		}()
	}
	wg.Wait()
	succeeded := 0
	for _, c := range results {
		if c.Status == "SUCCEEDED" {
			succeeded++
		}
	}
	if succeeded != 1 || e.Count(t, "artifacts WHERE type = 'debate_round'") != 1 {
		t.Fatalf("racing answers: %+v, %d rounds", results, e.Count(t, "artifacts WHERE type = 'debate_round'"))
	}
	if n := e.Count(t, "artifacts WHERE type = 'agent_work_packet' AND is_latest"); n != 3 {
		t.Errorf("%d packets after one answered turn, want 3 (the forged one, the turn and the synthesis)", n)
	}
	// The same packet answered again, later.
	if c := invoke(t, e, agent, "debate.argue", map[string]any{"packet": st.Packet, "argument": "B"}); c.Status != "FAILED" {
		t.Errorf("second answer: %+v", c)
	}

	// A round cannot be rewritten, nor forged.
	var r replayOut
	ok(t, e, alice, "debate.replay", map[string]any{"session": st.Session}, &r)
	var cur struct{ Artifact struct{ ContentHash string } }
	e.OK(t, agent, `query($r: Ref!) { artifact(ref: $r) { contentHash } }`, map[string]any{"r": r.Rounds[0].Ref}, &cur)
	var upd struct {
		UpdateArtifact struct {
			Typename string `json:"__typename"`
			Message  string
		}
	}
	e.OK(t, agent, `mutation($r: Ref!, $h: String!) { updateArtifact(input: {ref: $r, baseContentHash: $h, patch: [{op: "replace", path: "/argument", value: "rewritten"}]}) {
	  __typename ... on Problem { message } } }`, map[string]any{"r": r.Rounds[0].Ref, "h": cur.Artifact.ContentHash}, &upd)
	if upd.UpdateArtifact.Typename == "WriteSuccess" {
		t.Errorf("rewrite a round: %+v", upd)
	}
	var forged struct {
		CreateArtifact struct {
			Typename string `json:"__typename"`
			Message  string
		}
	}
	e.OK(t, agent, `mutation($s: String!) { createArtifact(input: {type: "debate_round", title: "Forged", content: {session: $s, round: 1, persona: "theorist", actor: "agent-1",
	  argument: "forged", packet: "agent_work_packet:x"}}) { __typename ... on Problem { message } } }`, map[string]any{"s": st.Session}, &forged)
	if forged.CreateArtifact.Typename != "PermissionDenied" {
		t.Errorf("forged round: %+v", forged)
	}

	// Replay of what the caller cannot read, or of no session.
	if c := invoke(t, e, other, "debate.replay", map[string]any{"session": "debate_session:nope"}); c.Status != "FAILED" || c.Error.Code == "" {
		t.Errorf("replay of no session: %+v", c)
	}
	if c := invoke(t, e, other, "debate.replay", map[string]any{"session": r.Rounds[0].Ref}); c.Status != "FAILED" {
		t.Errorf("replay of a round: %+v", c)
	}
}

// A round appended whose next packet was never issued (the server stopped
// between the two) is caught up from durable state: the next replay issues
// the next turn's packet, once.
func TestDebateCatchesUpFromDurableState(t *testing.T) {
	e := apitest.New(t)
	alice := apitest.Contributor(t, "alice")
	var st startOut
	ok(t, e, alice, "debate.start", map[string]any{"topic": "T", "personas": []string{"theorist", "skeptic"}, "k": 1}, &st)
	id := strings.TrimPrefix(st.Session, "debate_session:")
	// The round of turn 1, as debate.argue writes it, and nothing after.
	ctx := request.With(context.Background(), request.System("test", time.Now()))
	content, _ := json.Marshal(map[string]any{"session": st.Session, "turn": 1, "round": 1, "persona": "theorist", "actor": "agent-x",
		"argument": "A", "citations": []string{}, "packet": st.Packet})
	if _, err := e.Store.ServerCreate(ctx, "debate", store.CreateParams{Type: "debate_round", ID: id + ".1", Title: "Round 1, theorist", Content: content}); err != nil {
		t.Fatal(err)
	}
	var r, again replayOut
	ok(t, e, alice, "debate.replay", map[string]any{"session": st.Session}, &r)
	if len(r.Rounds) != 1 || r.Next == nil || r.Next.Turn != 2 || r.Next.Persona != "skeptic" || r.Next.Packet == "" || r.Next.Packet == st.Packet {
		t.Fatalf("replay: %+v", r)
	}
	ok(t, e, alice, "debate.replay", map[string]any{"session": st.Session}, &again)
	if again.Next == nil || again.Next.Packet != r.Next.Packet {
		t.Fatalf("second replay issued another packet: %+v", again.Next)
	}
	p := claim(t, e, apitest.Contributor(t, "agent-skeptic"), r.Next.Packet)
	if p.Inputs.Persona != "skeptic" || len(p.Inputs.Transcript) != 1 {
		t.Fatalf("caught-up packet: %+v", p)
	}
}

// An agent that claims a turn's packet and ends it with completeWorkPacket
// (FAILED, no argument) instead of debate.argue cannot stall the debate: the
// next replay issues the turn a new packet, the ended one is refused, and
// the new one is answered as usual.
func TestAnEndedPacketWithoutItsRoundIsReissued(t *testing.T) {
	e := apitest.New(t)
	alice := apitest.Contributor(t, "alice")
	saboteur := apitest.Contributor(t, "agent-saboteur")
	var st startOut
	ok(t, e, alice, "debate.start", map[string]any{"topic": "T", "personas": []string{"theorist", "skeptic"}, "k": 1}, &st)
	if p := claim(t, e, saboteur, st.Packet); p.Status != "claimed" && p.Status != "CLAIMED" {
		t.Fatalf("claim: %+v", p)
	}
	var done struct {
		CompleteWorkPacket struct {
			Typename string `json:"__typename"`
			Message  string
		}
	}
	e.OK(t, saboteur, `mutation($r: Ref!) { completeWorkPacket(input: {ref: $r, status: FAILED, resultRefs: [], summary: "no"}) { __typename ... on Problem { message } } }`,
		map[string]any{"r": st.Packet}, &done)
	if done.CompleteWorkPacket.Typename == "Problem" || strings.HasSuffix(done.CompleteWorkPacket.Typename, "Denied") {
		t.Fatalf("completeWorkPacket: %+v", done)
	}
	var r, again replayOut
	ok(t, e, alice, "debate.replay", map[string]any{"session": st.Session}, &r)
	if len(r.Rounds) != 0 || r.Next == nil || r.Next.Turn != 1 || r.Next.Packet == "" || r.Next.Packet == st.Packet {
		t.Fatalf("replay after the packet ended without a round: %+v (the ended packet %s)", r.Next, st.Packet)
	}
	ok(t, e, alice, "debate.replay", map[string]any{"session": st.Session}, &again)
	if again.Next == nil || again.Next.Packet != r.Next.Packet {
		t.Fatalf("a second replay issued yet another packet: %+v", again.Next)
	}
	agent := apitest.Contributor(t, "agent-theorist")
	if c := invoke(t, e, saboteur, "debate.argue", map[string]any{"packet": st.Packet, "argument": "late"}); c.Status != "FAILED" {
		t.Errorf("an answer on the ended packet: %+v", c)
	}
	if p := claim(t, e, agent, r.Next.Packet); p.Inputs.Turn != 1 || p.Inputs.Persona != "theorist" {
		t.Fatalf("the new packet: %+v", p)
	}
	var a argueOut
	ok(t, e, agent, "debate.argue", map[string]any{"packet": r.Next.Packet, "argument": "A"}, &a)
	if a.Round == "" || a.NextPacket == nil {
		t.Fatalf("the answer on the new packet: %+v", a)
	}
}
