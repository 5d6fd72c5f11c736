package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
)

// SupersedeParams is the input of supersedeArtifact.
type SupersedeParams struct {
	Ref            string  `json:"ref"`
	Replacement    *string `json:"replacement,omitempty"`
	Reason         string  `json:"reason"`
	IdempotencyKey string  `json:"-"`
}

// SupersedeArtifact retires an artifact in favour of its replacement: the old
// one keeps every version but is no longer latest, and names what replaced it.
func (s *Store) SupersedeArtifact(ctx context.Context, p SupersedeParams) (*WriteResult, error) {
	res, replay, err := write(ctx, s, writeOp{Operation: "supersedeArtifact", IdempotencyKey: p.IdempotencyKey, Input: p},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.supersede(ctx, w, p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

func (s *Store) supersede(ctx context.Context, w *writer, p SupersedeParams) (*WriteResult, error) {
	var problems []problem.Detail
	r, err := ref.Parse(p.Ref)
	if err != nil {
		problems = append(problems, problem.Field("ref", "ref", err.Error(), p.Ref))
	}
	var repl *ref.Ref
	if p.Replacement != nil {
		rr, err := ref.Parse(*p.Replacement)
		if err != nil {
			problems = append(problems, problem.Field("replacement", "ref", err.Error(), *p.Replacement))
		} else {
			rr = rr.Unpinned()
			repl = &rr
		}
	}
	if strings.TrimSpace(p.Reason) == "" {
		problems = append(problems, problem.Field("reason", "minLength", "say why the artifact is superseded", p.Reason))
	}
	if len(problems) > 0 {
		return nil, problem.Invalid(problems...)
	}
	row, err := w.q.ArtifactGetForUpdate(ctx, r.Type, r.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, problem.NotFoundRef(r.Unpinned().String())
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", r.Unpinned(), err)
	}
	cur := fromRow(row)
	if err := s.readable(ctx, w, cur); err != nil {
		return nil, err
	}
	t, err := s.registry.GetWith(ctx, w.q, cur.Type)
	if err != nil {
		return nil, err
	}
	if err := allowWrite(t, "supersede", t.Doc.Policy.Supersede, "supersedeArtifact", w.rc, cur.CreatedBy); err != nil {
		return nil, err
	}
	if !cur.IsLatest {
		return nil, problem.Invalid(problem.Field("ref", "superseded",
			fmt.Sprintf("%s was already superseded (by %s)", cur.Unpinned(), orNothing(cur.SupersededBy)), p.Ref))
	}
	if repl != nil {
		// An artifact never replaces itself, whatever its type declares.
		if repl.Type == cur.Type && repl.ID == cur.ID {
			return nil, problem.Invalid(problem.Field("replacement", "no_self_supersede", "an artifact cannot supersede itself", repl.String()))
		}
		if repl.Type != cur.Type {
			return nil, problem.Invalid(problem.Field("replacement", "type",
				fmt.Sprintf("a %s is replaced by another %s, not a %s", cur.Type, cur.Type, repl.Type), repl.String()))
		}
		nrow, err := w.q.ArtifactGetByTypeID(ctx, repl.Type, repl.ID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, problem.Invalid(problem.Field("replacement", "exists", "no artifact "+repl.String()+"; create the replacement first", repl.String()))
		}
		if err != nil {
			return nil, fmt.Errorf("load replacement %s: %w", repl, err)
		}
		if !nrow.IsLatest {
			return nil, problem.Invalid(problem.Field("replacement", "superseded", repl.String()+" is itself superseded", repl.String()))
		}
	}
	if err := s.runValidators(ctx, w, t, &ValidationInput{Operation: OpSupersede, ID: cur.ID, Title: cur.Title,
		Content: cur.Content, Prev: cur, Replacement: repl}); err != nil {
		return nil, err
	}
	var by *string
	if repl != nil {
		s := repl.String()
		by = &s
	}
	if err := w.q.ArtifactSupersede(ctx, by, cur.PK); err != nil {
		return nil, fmt.Errorf("supersede %s: %w", cur.Unpinned(), err)
	}
	pinned := cur.Ref().String()
	if _, err := w.journalNote(ctx, "supersedeArtifact", pinned, p.Reason); err != nil {
		return nil, err
	}
	payload := map[string]any{"ref": pinned, "type": cur.Type, "id": cur.ID, "supersededBy": by, "reason": p.Reason}
	audience, err := w.audience(ctx, cur)
	if err != nil {
		return nil, err
	}
	if err := w.event(ctx, "artifact.superseded", pinned, payload, audience); err != nil {
		return nil, err
	}
	return &WriteResult{Ref: pinned, ContentHash: cur.ContentHash, RequestID: w.rc.RequestID, Warnings: []string{}}, nil
}

func orNothing(s *string) string {
	if s == nil {
		return "nothing: it was retired"
	}
	return *s
}
