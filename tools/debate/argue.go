package debate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/workpacket"
)

// packetContent is the part of a debate.turn packet argue reads.
type packetContent struct {
	Skill    string `json:"skill_name"`
	ToolCall string `json:"tool_call"`
	Inputs   struct {
		Session   string `json:"session"`
		Turn      int    `json:"turn"`
		Round     int    `json:"round"`
		Persona   string `json:"persona"`
		Synthesis bool   `json:"synthesis"`
	} `json:"inputs"`
}

// argue is debate.argue: the claimant of a turn's packet answers it. The
// round is appended (the synthesis also concludes the session), the packet
// completed with the round as its result, and the next turn issued.
func (e *engine) argue(ctx context.Context, args json.RawMessage) (any, error) {
	var in argueArgs
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	pr, err := ref.Parse(in.Packet)
	if err != nil || pr.Type != workpacket.PacketType {
		return nil, problem.Invalid(problem.Field("input.args.packet", "ref_type", "names a debate turn's agent_work_packet", in.Packet))
	}
	pk, err := e.st.Get(ctx, pr.Unpinned())
	if errors.Is(err, store.ErrNotFound) {
		return nil, problem.NotFoundRef(in.Packet)
	}
	if err != nil {
		return nil, err
	}
	var pc packetContent
	_ = json.Unmarshal(pk.Content, &pc)
	if pc.Skill != TurnTool {
		return nil, problem.Invalid(problem.Field("input.args.packet", "debate_turn", "is a "+pc.Skill+" packet, not a debate turn's", in.Packet))
	}
	// The claimant only, before anything is written: a refused completion
	// must not leave a round behind.
	if err := e.p.Holds(ctx, in.Packet, "answer this debate turn"); err != nil {
		return nil, err
	}
	sr, err := ref.Parse(pc.Inputs.Session)
	if err != nil {
		return nil, fmt.Errorf("packet %s names no session: %w", in.Packet, err)
	}
	sess, err := e.st.Get(ctx, sr.Unpinned())
	if err != nil {
		return nil, fmt.Errorf("read the session of %s: %w", in.Packet, err)
	}
	if sess.Type != SessionType {
		return nil, problem.Invalid(problem.Field("input.args.packet", "debate_turn", "names no debate session", in.Packet))
	}
	// Anyone may invoke debate.turn and so write a packet that looks like a
	// turn: only the packets the session's creator's calls wrote (issue's)
	// are its turns, and only the turn due now, as the session says it.
	s := decodeSession(sess)
	if pk.CreatedBy != sess.CreatedBy || s.Turn == nil || s.Turn.Packet != pk.Unpinned().String() {
		return nil, problem.Invalid(problem.Field("input.args.packet", "debate_turn",
			"is not the packet "+sess.Unpinned().String()+" issued for its current turn", in.Packet))
	}
	if rd, persona, synth := s.at(pc.Inputs.Turn); pc.Inputs.Turn < 1 || rd != pc.Inputs.Round || persona != pc.Inputs.Persona || synth != pc.Inputs.Synthesis {
		return nil, problem.Invalid(problem.Field("input.args.packet", "debate_turn", "its turn does not match the session's order", in.Packet))
	}
	if err := checkAnswer(in, pc.Inputs.Synthesis); err != nil {
		return nil, err
	}
	rc := request.From(ctx)
	rr := roundRef(sess.ID, pc.Inputs.Turn)
	content := map[string]any{"session": sess.Unpinned().String(), "turn": pc.Inputs.Turn, "round": pc.Inputs.Round,
		"persona": pc.Inputs.Persona, "actor": rc.Actor.ID, "citations": nonNil(in.Citations), "packet": pk.Unpinned().String(),
		"tool_call": pc.ToolCall}
	title := fmt.Sprintf("Round %d, %s", pc.Inputs.Round, pc.Inputs.Persona)
	if pc.Inputs.Synthesis {
		content["argument"], content["verdict"], content["new_questions"] = *in.Synthesis, in.Verdict, nonNil(in.NewQuestions)
		title = "Synthesis"
	} else {
		content["argument"] = *in.Argument
	}
	body, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("encode the round: %w", err)
	}
	event := map[string]any{"session": sess.Unpinned().String(), "round_ref": rr.String(), "turn": pc.Inputs.Turn,
		"round": pc.Inputs.Round, "persona": pc.Inputs.Persona, "actor": rc.Actor.ID}
	err = e.st.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		s := tx.Store()
		if _, err := s.ServerCreate(ctx, op, store.CreateParams{Type: RoundType, ID: rr.ID, Title: title, Content: body}); err != nil {
			if idTaken(err) {
				return problem.New(problem.LifecycleViolation, "turn %d of %s was answered already (%s)", pc.Inputs.Turn, sess.Unpinned(), rr)
			}
			return fmt.Errorf("append the round: %w", err)
		}
		if _, err := s.ServerLink(ctx, op, store.LinkParams{From: rr.String(), Predicate: "part_of", To: sess.Unpinned().String()}); err != nil {
			return fmt.Errorf("link the round to its session: %w", err)
		}
		return s.ServerEvent(ctx, op, store.EventParams{Type: EventRoundCompleted, Ref: sess.Unpinned().String(), Payload: event})
	})
	if err != nil {
		return nil, err
	}
	if pc.Inputs.Synthesis {
		if sess, err = e.conclude(ctx, sess, in, rr); err != nil {
			return nil, err
		}
	}
	summary := title + " by " + rc.Actor.ID
	if _, err := e.p.Complete(ctx, workpacket.CompleteInput{Ref: pk.Unpinned().String(), Status: workpacket.PacketDone,
		ResultRefs: []string{rr.String()}, Summary: &summary}); err != nil {
		// The round stands (its claimant answered while holding the
		// packet); the next turn is still issued.
		e.d.Logger().Warn("debate.argue: complete the packet", "packet", in.Packet, "err", err)
	}
	out := map[string]any{"session": sess.Unpinned().String(), "round": rr.String(), "result_ref": rr.String(), "concluded": pc.Inputs.Synthesis}
	if pc.Inputs.Synthesis {
		out["next_packet"] = nil
		return out, nil
	}
	if sess, err = e.st.Get(ctx, sess.Unpinned()); err != nil {
		return nil, err
	}
	next, err := e.issue(ctx, sess)
	if err != nil {
		return nil, err
	}
	out["next_packet"] = next
	return out, nil
}

// checkAnswer refuses an answer that does not fit its turn, naming the
// field: a round is {argument, citations}, the synthesis {synthesis,
// verdict, new_questions}.
func checkAnswer(in argueArgs, synth bool) error {
	var ps []problem.Detail
	if synth {
		if in.Synthesis == nil {
			ps = append(ps, problem.Field("input.args.synthesis", "required", "the synthesizer's turn is answered with a synthesis", nil))
		}
		if in.Verdict == "" {
			ps = append(ps, problem.Field("input.args.verdict", "required", "the synthesis gives a verdict: supported, refuted, inconclusive or no_consensus", nil))
		}
		if in.Argument != nil || in.Citations != nil {
			ps = append(ps, problem.Field("input.args.argument", "not_allowed", "the synthesizer's turn takes synthesis, verdict and new_questions, not an argument", nil))
		}
	} else {
		if in.Argument == nil {
			ps = append(ps, problem.Field("input.args.argument", "required", "a round is answered with an argument (markdown) and its citations", nil))
		}
		if in.Synthesis != nil || in.Verdict != "" || in.NewQuestions != nil {
			ps = append(ps, problem.Field("input.args.synthesis", "not_allowed", "only the synthesizer's turn takes synthesis, verdict and new_questions", nil))
		}
	}
	if len(ps) > 0 {
		return problem.Invalid(ps...)
	}
	return nil
}

// conclude writes the synthesis to the session and concludes it, as its
// creator (the lifecycle's owner), with the concluded event.
func (e *engine) conclude(ctx context.Context, sess *store.Artifact, in argueArgs, rr ref.Ref) (*store.Artifact, error) {
	owner := dispatch.AsCaller(ctx, sess, "debate")
	actor := request.From(ctx).Actor.ID
	for attempt := 0; ; attempt++ {
		s := decodeSession(sess)
		if s.Synthesis != nil {
			return nil, problem.New(problem.LifecycleViolation, "%s is concluded already", sess.Unpinned())
		}
		content, err := withFields(sess.Content, map[string]any{"synthesis": *in.Synthesis, "verdict": in.Verdict,
			"new_questions": append(nonNil(s.NewQuestions), in.NewQuestions...)})
		if err != nil {
			return nil, err
		}
		concluded := "concluded"
		var res *store.WriteResult
		err = e.st.InTx(owner, func(ctx context.Context, tx *store.Tx) error {
			var err error
			res, err = tx.Store().ServerUpdate(ctx, op, store.UpdateParams{Ref: sess.Unpinned().String(), BaseContentHash: sess.ContentHash,
				Content: content, LifecycleState: &concluded})
			if err != nil {
				return err
			}
			return tx.Store().ServerEvent(ctx, op, store.EventParams{Type: EventConcluded, Ref: sess.Unpinned().String(),
				Payload: map[string]any{"session": sess.Unpinned().String(), "verdict": in.Verdict, "synthesis_round": rr.String(), "actor": actor}})
		})
		if p, ok := problem.As(err); ok && p.Code == problem.VersionConflict && attempt < 3 {
			if sess, err = e.st.Get(owner, sess.Unpinned()); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("conclude %s: %w", sess.Unpinned(), err)
		}
		return res.Artifact, nil
	}
}

// idTaken says whether a create failed because the id is in use.
func idTaken(err error) bool {
	p, ok := problem.As(err)
	if !ok || p.Code != problem.ValidationFailed {
		return false
	}
	for _, d := range p.Details {
		if d.Path == "id" && d.Constraint == "unique" {
			return true
		}
	}
	return false
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
