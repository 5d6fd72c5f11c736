package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
)

// MaxBatchWrites bounds a batch.
const MaxBatchWrites = 100

// BatchWrite is one write of a batch: exactly one of the operations, with an
// optional alias later writes may use ("$alias") wherever they take a ref.
type BatchWrite struct {
	Alias     string           `json:"alias,omitempty"`
	Create    *CreateParams    `json:"createArtifact,omitempty"`
	Update    *UpdateParams    `json:"updateArtifact,omitempty"`
	Supersede *SupersedeParams `json:"supersedeArtifact,omitempty"`
	Comment   *CommentParams   `json:"addComment,omitempty"`
	Link      *LinkParams      `json:"addLink,omitempty"`
	Cite      *CiteParams      `json:"cite,omitempty"`
	Signal    *SignalParams    `json:"addSignal,omitempty"`
}

// BatchParams is the input of batch.
type BatchParams struct {
	Writes         []BatchWrite `json:"writes"`
	Atomic         bool         `json:"atomic"`
	IdempotencyKey string       `json:"-"`
}

// BatchItem is the outcome of one write: a result, a problem, or (in an atomic
// batch that failed) why it was not committed.
type BatchItem struct {
	Result       *WriteResult   `json:"result,omitempty"`
	Problem      *StoredProblem `json:"problem,omitempty"`
	NotCommitted string         `json:"notCommitted,omitempty"`
}

// BatchResult is the outcome of a batch; it is what its idempotency key stores.
type BatchResult struct {
	Committed bool        `json:"committed"`
	Items     []BatchItem `json:"items"`
	RequestID string      `json:"requestId"`
	Replay    bool        `json:"-"`
}

// batchAborted carries an atomic batch's result out of its rolled-back transaction.
type batchAborted struct{ res *BatchResult }

func (b *batchAborted) Error() string { return "batch aborted" }

var aliasRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// Batch runs many writes in one transaction. Atomic: all or nothing. Otherwise
// each write commits or fails on its own (a savepoint each) and the results say
// which. A batch-wide problem (permissions, idempotency, malformed batch) is
// returned as the error.
func (s *Store) Batch(ctx context.Context, p BatchParams) (*BatchResult, error) {
	if err := checkBatch(p); err != nil {
		return nil, err
	}
	res, replay, err := write(ctx, s, writeOp{Operation: "batch", IdempotencyKey: p.IdempotencyKey, Input: p, Weight: len(p.Writes)},
		func(ctx context.Context, w *writer) (*BatchResult, error) { return s.batch(ctx, w, p) })
	var aborted *batchAborted
	if errors.As(err, &aborted) {
		res, replay, err = aborted.res, false, nil
	}
	if err != nil {
		return nil, err
	}
	res.Replay = replay
	for i := range res.Items {
		if r := res.Items[i].Result; r != nil && res.Committed {
			if _, err := s.finish(ctx, r, replay); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

func checkBatch(p BatchParams) error {
	if len(p.Writes) == 0 {
		return problem.Invalid(problem.Field("writes", "minItems", "a batch needs at least one write", nil))
	}
	if len(p.Writes) > MaxBatchWrites {
		return problem.Invalid(problem.Field("writes", "maxItems", fmt.Sprintf("a batch has at most %d writes", MaxBatchWrites), len(p.Writes)))
	}
	var out []problem.Detail
	seen := map[string]int{}
	for i, w := range p.Writes {
		n := 0
		for _, set := range []bool{w.Create != nil, w.Update != nil, w.Supersede != nil, w.Comment != nil, w.Link != nil, w.Cite != nil, w.Signal != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			out = append(out, problem.Field(fmt.Sprintf("writes[%d]", i), "oneOf", "each write sets exactly one operation", n))
		}
		if w.Alias != "" {
			if !aliasRE.MatchString(w.Alias) {
				out = append(out, problem.Field(fmt.Sprintf("writes[%d].alias", i), "pattern", "an alias is a name of letters, digits and '_'", w.Alias))
			} else if j, dup := seen[w.Alias]; dup {
				out = append(out, problem.Field(fmt.Sprintf("writes[%d].alias", i), "unique", fmt.Sprintf("writes[%d] already uses this alias", j), w.Alias))
			}
			seen[w.Alias] = i
		}
	}
	if len(out) > 0 {
		return problem.Invalid(out...)
	}
	return nil
}

func (s *Store) batch(ctx context.Context, w *writer, p BatchParams) (*BatchResult, error) {
	res := &BatchResult{Committed: true, Items: make([]BatchItem, len(p.Writes)), RequestID: w.rc.RequestID}
	aliases := map[string]*WriteResult{}
	for i, bw := range p.Writes {
		r, err := s.batchWrite(ctx, w, i, bw, aliases, !p.Atomic)
		if err == nil {
			res.Items[i].Result = r
			if bw.Alias != "" {
				aliases[bw.Alias] = r
			}
			continue
		}
		prob, ok := problem.As(err)
		if !ok {
			return nil, err // an internal failure ends the batch whatever its mode
		}
		res.Items[i].Problem = storeProblem(prob)
		if p.Atomic {
			res.Committed = false
			for j := range p.Writes {
				switch {
				case j < i:
					res.Items[j] = BatchItem{NotCommitted: fmt.Sprintf("rolled back: writes[%d] failed (%s)", i, prob.Code)}
				case j > i:
					res.Items[j] = BatchItem{NotCommitted: fmt.Sprintf("not attempted: writes[%d] failed (%s)", i, prob.Code)}
				}
			}
			return nil, &batchAborted{res}
		}
	}
	return res, nil
}

// batchWrite runs one write, in its own savepoint when failures are isolated.
func (s *Store) batchWrite(ctx context.Context, w *writer, i int, bw BatchWrite, aliases map[string]*WriteResult, isolate bool) (*WriteResult, error) {
	if err := resolveAliases(i, &bw, aliases); err != nil {
		return nil, err
	}
	run := func(w *writer) (*WriteResult, error) {
		switch {
		case bw.Create != nil:
			return s.create(ctx, w, *bw.Create, "createArtifact")
		case bw.Update != nil:
			return s.update(ctx, w, *bw.Update)
		case bw.Supersede != nil:
			return s.supersede(ctx, w, *bw.Supersede)
		case bw.Comment != nil:
			return s.comment(ctx, w, *bw.Comment)
		case bw.Link != nil:
			return s.link(ctx, w, "addLink", *bw.Link)
		case bw.Cite != nil:
			return s.cite(ctx, w, *bw.Cite)
		default:
			return s.signal(ctx, w, *bw.Signal)
		}
	}
	if !isolate {
		return run(w)
	}
	sp, err := w.tx.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	// The savepoint may roll back the actor row with the write; the flag is shared
	// only if this write succeeds.
	recorded := *w.actorRecorded
	child := &writer{q: w.q.WithTx(sp), rc: w.rc, op: w.op, tx: sp, actorRecorded: &recorded, store: w.store}
	r, err := run(child)
	if err != nil {
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return nil, fmt.Errorf("rollback to savepoint: %w", rbErr)
		}
		return nil, err
	}
	if err := sp.Commit(ctx); err != nil {
		return nil, fmt.Errorf("release savepoint: %w", err)
	}
	*w.actorRecorded = recorded
	w.hooks = append(w.hooks, child.hooks...) // a rolled-back write's hooks are dropped with it
	return r, nil
}

// resolveAliases replaces "$alias" in the ref fields of a write by the ref of the
// earlier write with that alias ("$alias" as a baseContentHash: its hash).
func resolveAliases(i int, bw *BatchWrite, aliases map[string]*WriteResult) error {
	var problems []problem.Detail
	sub := func(field string, v *string, hash bool) {
		if v == nil || len(*v) < 2 || (*v)[0] != '$' {
			return
		}
		r, ok := aliases[(*v)[1:]]
		if !ok {
			problems = append(problems, problem.Field(fmt.Sprintf("writes[%d].%s", i, field), "alias",
				fmt.Sprintf("no earlier write has the alias %q", (*v)[1:]), *v))
			return
		}
		if hash {
			*v = r.ContentHash
			return
		}
		rf, _ := ref.Parse(r.Ref)
		*v = rf.Unpinned().String()
	}
	switch {
	case bw.Update != nil:
		u := *bw.Update
		sub("updateArtifact.ref", &u.Ref, false)
		sub("updateArtifact.baseContentHash", &u.BaseContentHash, true)
		bw.Update = &u
	case bw.Supersede != nil:
		u := *bw.Supersede
		u.Replacement = copyPtr(u.Replacement)
		sub("supersedeArtifact.ref", &u.Ref, false)
		sub("supersedeArtifact.replacement", u.Replacement, false)
		bw.Supersede = &u
	case bw.Comment != nil:
		u := *bw.Comment
		u.ThreadParent = copyPtr(u.ThreadParent)
		sub("addComment.ref", &u.Ref, false)
		sub("addComment.threadParent", u.ThreadParent, false)
		bw.Comment = &u
	case bw.Link != nil:
		u := *bw.Link
		sub("addLink.from", &u.From, false)
		sub("addLink.to", &u.To, false)
		ev := append([]string{}, u.Evidence...)
		for j := range ev {
			sub(fmt.Sprintf("addLink.evidence[%d]", j), &ev[j], false)
		}
		u.Evidence = ev
		bw.Link = &u
	case bw.Cite != nil:
		u := *bw.Cite
		sub("cite.ref", &u.Ref, false)
		bw.Cite = &u
	case bw.Signal != nil:
		u := *bw.Signal
		sub("addSignal.ref", &u.Ref, false)
		if u.Opponent != nil {
			o := *u.Opponent
			sub("addSignal.opponent", &o, false)
			u.Opponent = &o
		}
		bw.Signal = &u
	}
	if len(problems) > 0 {
		return problem.Invalid(problems...)
	}
	return nil
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
