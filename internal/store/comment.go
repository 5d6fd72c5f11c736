package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
)

// CommentParams is the input of addComment.
type CommentParams struct {
	Ref            string  `json:"ref"`
	Body           string  `json:"body"`
	ThreadParent   *string `json:"threadParent,omitempty"`
	Kind           *string `json:"kind,omitempty"`
	IdempotencyKey string  `json:"-"`
}

// AddComment writes a comment artifact on ref, linked to it by comments_on (and
// to the comment it answers by replies_to).
func (s *Store) AddComment(ctx context.Context, p CommentParams) (*WriteResult, error) {
	res, replay, err := write(ctx, s, writeOp{Operation: "addComment", IdempotencyKey: p.IdempotencyKey, Input: p},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.comment(ctx, w, p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

func (s *Store) comment(ctx context.Context, w *writer, p CommentParams) (*WriteResult, error) {
	target, err := ref.Parse(p.Ref)
	if err != nil {
		return nil, problem.Invalid(problem.Field("ref", "ref", err.Error(), p.Ref))
	}
	if strings.TrimSpace(p.Body) == "" {
		return nil, problem.Invalid(problem.Field("body", "minLength", "a comment needs a body", p.Body))
	}
	trow, err := w.q.ArtifactGetByTypeID(ctx, target.Type, target.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, problem.NotFoundRef(target.Unpinned().String())
	} else if err != nil {
		return nil, fmt.Errorf("load %s: %w", target, err)
	}
	tgt := fromRow(trow)
	if err := s.readable(ctx, w, tgt); err != nil {
		return nil, err
	}
	if tgt.participantsOnly() {
		// A comment is public; one about what only participants see would show
		// the world what it says.
		return nil, problem.Invalid(problem.Detail{Path: "ref", Constraint: "visibility", Value: mustJSON(target.String()),
			Message: fmt.Sprintf("%s is visible to its participants only, and a comment is public", target.Unpinned())})
	}
	content := map[string]any{"target": target.String(), "body": p.Body}
	var parent *ref.Ref
	if p.ThreadParent != nil {
		pr, err := ref.Parse(*p.ThreadParent)
		if err != nil {
			return nil, problem.Invalid(problem.Field("threadParent", "ref", err.Error(), *p.ThreadParent))
		}
		if pr.Type != "comment" {
			return nil, problem.Invalid(problem.Field("threadParent", "type", "a thread parent is a comment", pr.String()))
		}
		parent = &pr
		content["thread_parent"] = pr.String()
	}
	if p.Kind != nil {
		content["kind"] = *p.Kind
	}
	raw, _ := json.Marshal(content)
	res, err := s.create(ctx, w, CreateParams{Type: "comment", Title: commentTitle(p.Body), Content: raw}, "addComment")
	if err != nil {
		return nil, err
	}
	if _, err := s.link(ctx, w, "addComment", LinkParams{From: res.Ref, Predicate: "comments_on", To: target.Unpinned().String()}); err != nil {
		return nil, err
	}
	if parent != nil {
		if _, err := s.link(ctx, w, "addComment", LinkParams{From: res.Ref, Predicate: "replies_to", To: parent.Unpinned().String()}); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// commentTitle is the first line of the body, shortened to 80 characters.
func commentTitle(body string) string {
	line := strings.TrimSpace(strings.SplitN(strings.TrimSpace(body), "\n", 2)[0])
	if utf8.RuneCountInString(line) > 80 {
		r := []rune(line)
		line = string(r[:79]) + "…"
	}
	return line
}
