package debate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
)

// Names of the tools, types and events.
const (
	StartFunc  = "debate.start"
	ArgueFunc  = "debate.argue"
	ReplayFunc = "debate.replay"
	// TurnTool is the skill_call tool each turn's work packet is a call of.
	TurnTool = "debate.turn"

	SessionType = "debate_session"
	RoundType   = "debate_round"

	// Synthesizer is the persona of the closing turn.
	Synthesizer = "synthesizer"

	// EventRoundCompleted is emitted on the session when a round is
	// appended; EventConcluded when the synthesis concludes it. Both go to
	// the session's readers.
	EventRoundCompleted = "debate.round_completed"
	EventConcluded      = "debate.concluded"

	// op is the server operation the verbs' writes are journaled as.
	op = "debate"
)

// Bounds of what an agent hands back.
const (
	MaxArgument  = 8000
	MaxCitations = 32
	MaxCitation  = 200
	MaxSynthesis = 16000
	MaxQuestions = 16
	MaxQuestion  = 500
	MaxTopic     = 2000
)

// engine is what the verbs reach beyond the store: the dispatcher that
// issues the turns' packets and the packets the agents complete.
type engine struct {
	st *store.Store
	d  *dispatch.Dispatcher
	p  *workpacket.Packets
}

// bound is every store's engine: the verbs' functions are built with the
// runtimes, before the dispatcher exists (doc.go).
var bound sync.Map // *store.Store → *engine

// Bind makes the debate verbs of st issue and complete packets through d and
// p. The server's start hook calls it before the first request.
func Bind(st *store.Store, d *dispatch.Dispatcher, p *workpacket.Packets) {
	bound.Store(st, &engine{st: st, d: d, p: p})
}

func engineFor(st *store.Store) (*engine, error) {
	if e, ok := bound.Load(st); ok {
		return e.(*engine), nil
	}
	return nil, runtimes.Errorf(runtimes.CodeRefused, false, "the debate verbs are not bound to this server's dispatcher")
}

// participant is one entry of a session's participants.
type participant struct {
	Persona string `json:"persona"`
	Actor   string `json:"actor,omitempty"`
}

// turnState is the turn whose packet is out, kept in the session.
type turnState struct {
	Number int    `json:"number"`
	Packet string `json:"packet"`
	// Attempt counts the packets the turn had before this one (each ended
	// without its round).
	Attempt int `json:"attempt,omitempty"`
}

// session is the part of a debate_session the verbs read.
type session struct {
	Question     string        `json:"question"`
	MaxRounds    int           `json:"max_rounds"`
	Participants []participant `json:"participants"`
	Synthesis    *string       `json:"synthesis"`
	Verdict      string        `json:"verdict"`
	NewQuestions []string      `json:"new_questions"`
	Turn         *turnState    `json:"turn"`
}

func decodeSession(a *store.Artifact) session {
	var s session
	_ = json.Unmarshal(a.Content, &s)
	return s
}

// speakers are the personas who argue, in turn order.
func (s session) speakers() []string {
	var out []string
	for _, p := range s.Participants {
		if p.Persona != Synthesizer {
			out = append(out, p.Persona)
		}
	}
	return out
}

// turns is the number of argued turns; the synthesis is turn turns()+1.
func (s session) turns() int { return s.MaxRounds * len(s.speakers()) }

// at is who speaks at turn n, in which round, and whether it is the
// synthesis.
func (s session) at(n int) (round int, persona string, synth bool) {
	sp := s.speakers()
	if n > s.turns() {
		return s.MaxRounds, Synthesizer, true
	}
	return (n-1)/len(sp) + 1, sp[(n-1)%len(sp)], false
}

// round is one debate_round as replay and the packets show it.
type round struct {
	Ref          string   `json:"ref"`
	Turn         int      `json:"turn"`
	Round        int      `json:"round"`
	Persona      string   `json:"persona"`
	Actor        string   `json:"actor"`
	Argument     string   `json:"argument"`
	Citations    []string `json:"citations"`
	Verdict      string   `json:"verdict,omitempty"`
	NewQuestions []string `json:"new_questions,omitempty"`
	Packet       string   `json:"packet"`
	ToolCall     string   `json:"tool_call,omitempty"`
}

// roundRef is turn n's round of the session: one id per turn, so a turn is
// answered once.
func roundRef(sessionID string, n int) ref.Ref {
	return ref.Ref{Type: RoundType, ID: fmt.Sprintf("%s.%d", sessionID, n)}
}

// rounds reads the session's rounds in turn order, as ctx's actor, in one
// statement: the rounds of turns 1.. up to the first turn not answered.
func (e *engine) rounds(ctx context.Context, sess *store.Artifact, s session) ([]round, error) {
	refs := make([]ref.Ref, s.turns()+1)
	for i := range refs {
		refs[i] = roundRef(sess.ID, i+1)
	}
	got, err := e.st.GetMany(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("read the rounds of %s: %w", sess.Unpinned(), err)
	}
	var out []round
	for _, rr := range refs {
		a, ok := got[rr.String()]
		if !ok {
			break
		}
		var r round
		_ = json.Unmarshal(a.Content, &r)
		r.Ref = a.Unpinned().String()
		if r.Citations == nil {
			r.Citations = []string{}
		}
		out = append(out, r)
	}
	return out, nil
}

// issue makes sure the session's next turn has its packet out: none when
// the debate is over, the one the session names when it names this turn,
// else a new call of debate.turn as the session's creator, under a key
// naming the session and the turn (two issues racing, or one retried,
// make one call). It returns the packet's ref ("" when the debate is over).
func (e *engine) issue(ctx context.Context, sess *store.Artifact) (string, error) {
	for attempt := 0; ; attempt++ {
		s := decodeSession(sess)
		rs, err := e.rounds(ctx, sess, s)
		if err != nil {
			return "", err
		}
		n := len(rs) + 1
		if n > s.turns()+1 || s.Synthesis != nil || (sess.LifecycleState != nil && *sess.LifecycleState != "open") {
			return "", nil
		}
		retry := 0
		if s.Turn != nil && s.Turn.Number == n {
			live, err := e.packetLive(ctx, s.Turn.Packet)
			if err != nil || live {
				return s.Turn.Packet, err
			}
			// The turn's packet ended without its round: it expired, its
			// call was cancelled, or its claimant completed it with
			// completeWorkPacket instead of debate.argue. The turn gets a
			// new packet, so no agent can stall the debate.
			retry = s.Turn.Attempt + 1
		}
		rd, persona, synth := s.at(n)
		args, err := json.Marshal(map[string]any{"session": sess.Unpinned().String(), "turn": n, "round": rd, "persona": persona,
			"topic": s.Question, "synthesis": synth, "transcript": transcript(rs)})
		if err != nil {
			return "", fmt.Errorf("encode turn %d: %w", n, err)
		}
		owner := dispatch.AsCaller(ctx, sess, "debate")
		key := fmt.Sprintf("debate/%s/%d", sess.ID, n)
		if retry > 0 {
			key = fmt.Sprintf("%s/%d", key, retry)
		}
		call, err := e.d.Invoke(owner, dispatch.InvokeInput{Name: TurnTool, Args: args, IdempotencyKey: key})
		if err != nil {
			return "", fmt.Errorf("issue turn %d of %s: %w", n, sess.Unpinned(), err)
		}
		packet := ref.Ref{Type: workpacket.PacketType, ID: call.ID}.String()
		content, err := withFields(sess.Content, map[string]any{"turn": turnState{Number: n, Packet: packet, Attempt: retry}})
		if err != nil {
			return "", err
		}
		_, err = e.st.ServerUpdate(owner, op, store.UpdateParams{Ref: sess.Unpinned().String(), BaseContentHash: sess.ContentHash, Content: content})
		if p, ok := problem.As(err); ok && p.Code == problem.VersionConflict && attempt < 3 {
			// Another issue (or the owner) moved the session: look again;
			// the key makes the same turn's call the same one.
			if sess, err = e.st.Get(owner, sess.Unpinned()); err != nil {
				return "", err
			}
			continue
		}
		if err != nil {
			return "", fmt.Errorf("record turn %d of %s: %w", n, sess.Unpinned(), err)
		}
		return packet, nil
	}
}

// packetLive says whether a turn's packet may still be answered: it is
// open or claimed (an expired claim is the expiry sweep's to end).
func (e *engine) packetLive(ctx context.Context, packet string) (bool, error) {
	r, err := ref.Parse(packet)
	if err != nil {
		return false, fmt.Errorf("the session's turn names packet %q: %w", packet, err)
	}
	a, err := e.st.ServerGet(ctx, op, r)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read packet %s: %w", packet, err)
	}
	var st struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(a.Content, &st)
	return st.Status == workpacket.PacketOpen || st.Status == workpacket.PacketClaimed, nil
}

// transcript is what a packet shows of the rounds so far.
func transcript(rs []round) []map[string]any {
	out := make([]map[string]any, 0, len(rs))
	for _, r := range rs {
		out = append(out, map[string]any{"turn": r.Turn, "round": r.Round, "persona": r.Persona, "actor": r.Actor,
			"argument": r.Argument, "citations": r.Citations, "ref": r.Ref})
	}
	return out
}

// withFields returns content with the given top-level fields set.
func withFields(content json.RawMessage, set map[string]any) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(content, &m); err != nil {
		return nil, fmt.Errorf("decode session: %w", err)
	}
	for k, v := range set {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", k, err)
		}
		m[k] = b
	}
	return json.Marshal(m)
}
