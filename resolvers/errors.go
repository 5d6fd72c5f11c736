package resolvers

import (
	"context"
	"errors"
	"log/slog"
	"maps"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/budget"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// result turns a write path error into the union member a client sees. A problem
// that is not a member of this union, and every internal error, stays an error for
// the error presenter.
func result[T any](ctx context.Context, r *Resolver, err error) (T, error) {
	var zero T
	p, ok := problem.As(err)
	if !ok {
		return zero, err
	}
	if v, ok := r.problemModel(ctx, p).(T); ok {
		return v, nil
	}
	return zero, err
}

// problemModel builds the GraphQL problem type for p.
func (r *Resolver) problemModel(ctx context.Context, p *problem.Problem) any {
	rid := request.IDFrom(ctx)
	code := model.ErrorCode(p.Code)
	retryable := p.Retryable()
	var after *int
	if p.RetryAfter > 0 {
		ms := int(p.RetryAfter.Milliseconds())
		after = &ms
	}
	firstRef := func() *string {
		if len(p.Refs) > 0 {
			return &p.Refs[0]
		}
		return nil
	}
	switch p.Code {
	case problem.ValidationFailed:
		out := &model.ValidationFailed{Code: code, Message: p.Message, RequestID: rid, Retryable: retryable, RetryAfterMs: after}
		for _, d := range p.Details {
			vp := &model.ValidationProblem{Path: d.Path, Constraint: d.Constraint, Message: d.Message}
			if d.Value != nil {
				vp.ValueReceived = model.JSON(d.Value)
			}
			if d.Suggestion != "" {
				s := d.Suggestion
				vp.Suggestion = &s
			}
			out.Problems = append(out.Problems, vp)
		}
		if out.Problems == nil {
			out.Problems = []*model.ValidationProblem{}
		}
		return out
	case problem.PermissionDenied:
		return &model.PermissionDenied{Code: code, Message: p.Message, RequestID: rid, Retryable: retryable, RetryAfterMs: after}
	case problem.BudgetExceeded:
		x, _ := p.Extra.(*budget.Exceeded)
		if x == nil {
			return nil
		}
		return &model.BudgetExceeded{Code: code, Message: p.Message, RequestID: rid, Retryable: retryable, RetryAfterMs: after,
			EstimateUsd: x.EstimateUSD, Budget: budgetModel(x.Budget)}
	case problem.RateLimited:
		return &model.RateLimited{Code: code, Message: p.Message, RequestID: rid, Retryable: retryable, RetryAfterMs: after}
	case problem.IdempotencyKeyReuse:
		key, _ := p.Extra.(string)
		return &model.IdempotencyKeyReuse{Code: code, Message: p.Message, RequestID: rid, Retryable: retryable, RetryAfterMs: after, IdempotencyKey: key}
	case problem.NotFound:
		return &model.NotFound{Code: code, Message: p.Message, RequestID: rid, Retryable: retryable, RetryAfterMs: after, Ref: firstRef()}
	case problem.MutabilityViolation:
		m, _ := p.Extra.(string)
		ref := ""
		if r := firstRef(); r != nil {
			ref = *r
		}
		return &model.MutabilityViolation{Code: code, Message: p.Message, RequestID: rid, Retryable: retryable, RetryAfterMs: after, Ref: ref, Mutability: m}
	case problem.LifecycleViolation:
		out := &model.LifecycleViolation{Code: code, Message: p.Message, RequestID: rid, Retryable: retryable, RetryAfterMs: after, AllowedTransitions: []string{}}
		if r := firstRef(); r != nil {
			out.Ref = *r
		}
		if info, ok := p.Extra.(*store.LifecycleInfo); ok {
			if info.From != "" {
				out.From = &info.From
			}
			out.To = info.To
			out.AllowedTransitions = nonNil(info.Allowed)
		}
		return out
	case problem.LinkTargetMissing:
		return &model.LinkTargetMissing{Code: code, Message: p.Message, RequestID: rid, Retryable: retryable, RetryAfterMs: after, Missing: nonNil(p.Refs)}
	case problem.VersionConflict:
		c, _ := p.Extra.(*store.Conflict)
		if c == nil {
			return nil
		}
		out := &model.VersionConflict{Code: code, Message: p.Message, RequestID: rid, Retryable: retryable, RetryAfterMs: after,
			YourBase: c.YourBase, Current: model.NewArtifact(c.Current), ChangedAt: c.Current.UpdatedAt,
			DiffFromYourBase: model.JSON(c.DiffFromYourBase),
			MergeHint: &model.MergeHint{YourPatchReplaysCleanly: c.Hint.YourPatchReplaysCleanly, ConflictingPaths: nonNil(c.Hint.ConflictingPaths),
				SuggestedBaseContentHash: c.Hint.SuggestedBaseContentHash}}
		changedBy, err := r.loaders(ctx).Actor(ctx, c.Current.UpdatedBy)
		if err != nil {
			changedBy = &model.Actor{ID: c.Current.UpdatedBy, Kind: "unknown", Permissions: []string{}}
		}
		out.ChangedBy = changedBy
		if c.Hint.MergedContent != nil {
			out.MergeHint.MergedContent = model.JSON(c.Hint.MergedContent)
			title := c.Hint.MergedTitle
			out.MergeHint.MergedTitle = &title
		}
		return out
	}
	return nil
}

// ErrorPresenter turns every error a resolver returns into a GraphQL error with a
// code from the closed set and the request id. Problems keep their message and
// details; anything else is logged with its cause and reported as INTERNAL_ERROR.
func ErrorPresenter(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		rid := request.IDFrom(ctx)
		var gerr *gqlerror.Error
		if errors.As(err, &gerr) && gerr.Err == nil {
			// Parse and validation errors of the document, already safe.
			return withCode(gerr, problem.ValidationFailed, rid)
		}
		out := graphql.DefaultErrorPresenter(ctx, err)
		out.Message = err.Error()
		if p, ok := problem.As(err); ok {
			out.Message = p.Message
			out.Extensions = map[string]any{"code": string(p.Code), "requestId": rid}
			if len(p.Details) > 0 {
				out.Extensions["problems"] = p.Details
			}
			if p.RetryAfter > 0 {
				out.Extensions["retryAfterMs"] = p.RetryAfter.Milliseconds()
			}
			return out
		}
		if errors.Is(err, store.ErrNotFound) {
			out.Message = "not found"
			out.Extensions = map[string]any{"code": string(problem.NotFound), "requestId": rid}
			return out
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			log.InfoContext(ctx, "request cancelled", "request_id", rid, "err", err)
		} else {
			log.ErrorContext(ctx, "internal error", "request_id", rid, "err", err)
		}
		out.Message = "internal error (request " + rid + ")"
		out.Extensions = map[string]any{"code": string(problem.InternalError), "requestId": rid}
		return out
	}
}

func withCode(orig *gqlerror.Error, code problem.Code, rid string) *gqlerror.Error {
	// A copy: gqlgen reads the original's code after presenting it (over a
	// websocket, parse and validation errors go out as error, not next).
	e := *orig
	e.Extensions = maps.Clone(orig.Extensions)
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	if c, ok := e.Extensions["code"].(string); ok && c != "" && !isOurs(c) {
		e.Extensions["reason"] = c
	}
	if c, ok := e.Extensions["code"].(string); !ok || !isOurs(c) {
		e.Extensions["code"] = string(code)
	}
	e.Extensions["requestId"] = rid
	return &e
}

func isOurs(code string) bool {
	return model.ErrorCode(code).IsValid()
}

// Recover logs a panic with the request id and reports an internal error.
func Recover(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, v any) error {
		log.ErrorContext(ctx, "panic in resolver", "request_id", request.IDFrom(ctx), "panic", v)
		return errors.New("panic")
	}
}
