package debate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
)

// replay is debate.replay: the session's rounds in order and its synthesis,
// for a caller who may read the session. A session whose next turn has no
// packet out (the call that appended the last round ended before issuing
// it) gets it now.
func (e *engine) replay(ctx context.Context, args json.RawMessage) (any, error) {
	var in struct {
		Session string `json:"session"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	r, err := ref.Parse(in.Session)
	if err != nil {
		return nil, problem.Invalid(problem.Field("input.args.session", "ref", err.Error(), in.Session))
	}
	sess, err := e.st.Get(ctx, r.Unpinned())
	if errors.Is(err, store.ErrNotFound) || (err == nil && sess.Type != SessionType) {
		return nil, problem.NotFoundRef(in.Session)
	}
	if err != nil {
		return nil, err
	}
	s := decodeSession(sess)
	rs, err := e.rounds(ctx, sess, s)
	if err != nil {
		return nil, err
	}
	var synthesis any
	rounds := rs
	if len(rs) > s.turns() {
		rounds = rs[:s.turns()]
	}
	if s.Synthesis != nil {
		sy := map[string]any{"synthesis": *s.Synthesis, "verdict": s.Verdict, "new_questions": nonNil(s.NewQuestions)}
		if len(rs) > s.turns() {
			sy["actor"], sy["round_ref"] = rs[s.turns()].Actor, rs[s.turns()].Ref
		}
		synthesis = sy
	}
	state := ""
	if sess.LifecycleState != nil {
		state = *sess.LifecycleState
	}
	var next any
	if s.Synthesis == nil && state == "open" {
		packet, err := e.issue(ctx, sess)
		if err != nil {
			return nil, err
		}
		n := len(rs) + 1
		rd, persona, synth := s.at(n)
		next = map[string]any{"turn": n, "round": rd, "persona": persona, "synthesis": synth, "packet": packet}
	}
	return map[string]any{"session": sess.Unpinned().String(), "topic": s.Question, "state": state, "rounds": rounds,
		"synthesis": synthesis, "next": next}, nil
}
