package debate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
)

// start is debate.start: the session, as the caller, linked about the
// hypothesis debated, and the first turn's packet.
func (e *engine) start(ctx context.Context, args json.RawMessage) (any, error) {
	var in startArgs
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	var about ref.Ref
	if in.About != "" {
		r, err := ref.Parse(in.About)
		if err != nil {
			return nil, problem.Invalid(problem.Field("input.args.about", "ref", err.Error(), in.About))
		}
		a, err := e.st.Get(ctx, r)
		if errors.Is(err, store.ErrNotFound) {
			return nil, problem.Invalid(problem.Field("input.args.about", "exists", "no hypothesis "+in.About+" (or you may not read it)", in.About))
		}
		if err != nil {
			return nil, err
		}
		if a.Type != "hypothesis" {
			return nil, problem.Invalid(problem.Field("input.args.about", "ref_type", "a debate is about a hypothesis, not a "+a.Type, in.About))
		}
		about = a.Ref().Unpinned()
	}
	parts := make([]participant, 0, len(in.Personas)+1)
	for _, p := range in.Personas {
		parts = append(parts, participant{Persona: p})
	}
	parts = append(parts, participant{Persona: Synthesizer})
	topic := strings.TrimSpace(in.Topic)
	content, err := json.Marshal(map[string]any{"question": topic, "format": "round_robin", "max_rounds": in.K, "participants": parts})
	if err != nil {
		return nil, fmt.Errorf("encode the session: %w", err)
	}
	title := topic
	if len(title) > 200 {
		title = strings.ToValidUTF8(title[:200], "") + "…"
	}
	var res *store.WriteResult
	err = e.st.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		if res, err = tx.Store().CreateArtifact(ctx, store.CreateParams{Type: SessionType, Title: title, Content: content}); err != nil {
			return fmt.Errorf("create the session: %w", err)
		}
		if about.ID != "" {
			if _, err := tx.Store().AddLink(ctx, store.LinkParams{From: res.Ref, Predicate: "about", To: about.String()}); err != nil {
				return fmt.Errorf("link the session about %s: %w", about, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sess := res.Artifact
	packet, err := e.issue(ctx, sess)
	if err != nil {
		return nil, err
	}
	s := decodeSession(sess)
	return map[string]any{"session": sess.Unpinned().String(), "result_ref": res.Ref, "packet": packet, "turns": s.turns() + 1}, nil
}
