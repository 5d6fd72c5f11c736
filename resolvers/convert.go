package resolvers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/store"
)

func writeSuccess(res *store.WriteResult) *model.WriteSuccess {
	out := &model.WriteSuccess{Ref: res.Ref, ContentHash: res.ContentHash, Artifact: model.NewArtifact(res.Artifact),
		RequestID: res.RequestID, Warnings: nonNil(res.Warnings), IdempotentReplay: res.Replay}
	if res.Link != nil {
		out.Link = linkModel(*res.Link)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// raw returns nil for an absent JSON argument, so "not given" differs from null.
func raw(j model.JSON) json.RawMessage {
	if j == nil {
		return nil
	}
	return json.RawMessage(j)
}

func commentParams(in model.AddCommentInput) store.CommentParams {
	return store.CommentParams{Ref: in.Ref, Body: in.Body, ThreadParent: in.ThreadParent, Kind: in.Kind, IdempotencyKey: deref(in.IdempotencyKey)}
}

func linkParams(in model.AddLinkInput) store.LinkParams {
	return store.LinkParams{From: in.From, Predicate: in.Predicate, To: in.To, Evidence: in.Evidence, IdempotencyKey: deref(in.IdempotencyKey)}
}

func signalParams(in model.AddSignalInput) store.SignalParams {
	return store.SignalParams{Ref: in.Ref, Kind: in.Kind, Dimension: in.Dimension, Value: in.Value, Weight: in.Weight,
		Reason: in.Reason, Metadata: raw(in.Metadata), Opponent: in.Opponent, IdempotencyKey: deref(in.IdempotencyKey)}
}

func citeParams(in model.CiteInput) store.CiteParams {
	return store.CiteParams{Ref: in.Ref, PMID: in.Pmid, Span: in.Span, Claim: in.Claim, IdempotencyKey: deref(in.IdempotencyKey)}
}

func updateParams(in model.UpdateArtifactInput) store.UpdateParams {
	return store.UpdateParams{Ref: in.Ref, BaseContentHash: in.BaseContentHash, Content: raw(in.Content), Patch: raw(in.Patch),
		Title: in.Title, LifecycleState: in.LifecycleState, IdempotencyKey: deref(in.IdempotencyKey)}
}

func createParams(in model.CreateArtifactInput) store.CreateParams {
	return store.CreateParams{Type: in.Type, ID: deref(in.ID), Title: in.Title, Content: json.RawMessage(in.Content),
		LifecycleState: in.LifecycleState, IdempotencyKey: deref(in.IdempotencyKey)}
}

// batchParams converts a batch, refusing idempotency keys on its writes: the
// batch's own key covers them all.
func batchParams(in model.BatchInput) (store.BatchParams, error) {
	p := store.BatchParams{Atomic: in.Atomic == nil || *in.Atomic, IdempotencyKey: deref(in.IdempotencyKey)}
	var problems []problem.Detail
	for i, w := range in.Writes {
		bw := store.BatchWrite{Alias: deref(w.Alias)}
		var keys []*string
		if x := w.CreateArtifact; x != nil {
			c := createParams(*x)
			bw.Create, keys = &c, append(keys, x.IdempotencyKey)
		}
		if x := w.UpdateArtifact; x != nil {
			u := updateParams(*x)
			bw.Update, keys = &u, append(keys, x.IdempotencyKey)
		}
		if x := w.SupersedeArtifact; x != nil {
			bw.Supersede, keys = &store.SupersedeParams{Ref: x.Ref, Replacement: x.Replacement, Reason: x.Reason}, append(keys, x.IdempotencyKey)
		}
		if x := w.AddComment; x != nil {
			c := commentParams(*x)
			bw.Comment, keys = &c, append(keys, x.IdempotencyKey)
		}
		if x := w.AddLink; x != nil {
			l := linkParams(*x)
			bw.Link, keys = &l, append(keys, x.IdempotencyKey)
		}
		if x := w.AddSignal; x != nil {
			sg := signalParams(*x)
			bw.Signal, keys = &sg, append(keys, x.IdempotencyKey)
		}
		if x := w.Cite; x != nil {
			c := citeParams(*x)
			bw.Cite, keys = &c, append(keys, x.IdempotencyKey)
		}
		for _, key := range keys {
			if key != nil {
				problems = append(problems, problem.Field(fmt.Sprintf("writes[%d]", i), "idempotencyKey",
					"set idempotencyKey on the batch, not on its writes", *key))
			}
		}
		p.Writes = append(p.Writes, bw)
	}
	if len(problems) > 0 {
		return p, problem.Invalid(problems...)
	}
	return p, nil
}

func (r *Resolver) batchResult(ctx context.Context, res *store.BatchResult) *model.BatchResult {
	out := &model.BatchResult{Committed: res.Committed, RequestID: res.RequestID, IdempotentReplay: res.Replay}
	for _, it := range res.Items {
		switch {
		case it.Result != nil && res.Committed:
			out.Results = append(out.Results, writeSuccess(it.Result))
		case it.Problem != nil:
			if m, ok := r.problemModel(ctx, it.Problem.Problem()).(model.WriteResult); ok {
				out.Results = append(out.Results, m)
			} else {
				out.Results = append(out.Results, &model.NotCommitted{Message: it.Problem.Message})
			}
		default:
			out.Results = append(out.Results, &model.NotCommitted{Message: it.NotCommitted})
		}
	}
	if out.Results == nil {
		out.Results = []model.WriteResult{}
	}
	return out
}

func diffModel(d *store.ArtifactDiff) *model.ArtifactDiff {
	out := &model.ArtifactDiff{From: model.NewArtifact(d.From), To: model.NewArtifact(d.To), Patch: model.JSON(d.Patch), TextDiffs: []*model.TextFieldDiff{}}
	for _, t := range d.Text {
		td := &model.TextFieldDiff{Path: t.Path, Unified: t.Unified, Ops: []*model.DiffOp{}}
		for _, op := range t.Ops {
			td.Ops = append(td.Ops, &model.DiffOp{Op: model.DiffOpKind(op.Op), Text: op.Text})
		}
		out.TextDiffs = append(out.TextDiffs, td)
	}
	return out
}
