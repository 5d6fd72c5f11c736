package resolvers

import (
	"context"
	"strings"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/budget"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// EventBudgetSet is the event of an admin's setBudget, to the actor whose
// budget it is (and admins).
const EventBudgetSet = "agent.budget_set"

// maxActorID bounds the actor ids setBudget and budget take.
const maxActorID = 256

// budgetOf reads an actor's budget: the token's actor's own by default,
// another's for admins only.
func (r *Resolver) budgetOf(ctx context.Context, actor *string) (*model.Budget, error) {
	rc := request.From(ctx)
	if rc == nil || rc.Anonymous {
		return nil, problem.New(problem.Unauthenticated, "reading a budget needs a token")
	}
	id := rc.Actor.ID
	if actor != nil && *actor != id {
		if !rc.Actor.Has(auth.PermAdmin) {
			return nil, problem.New(problem.PermissionDenied, "only admins read another actor's budget")
		}
		id = *actor
	}
	if err := checkActorID("actor", id); err != nil {
		return nil, err
	}
	d, err := r.dispatcher()
	if err != nil {
		return nil, err
	}
	b, err := d.Budgets().Get(ctx, r.Store.Pool(), id, rc.Now)
	if err != nil {
		return nil, err
	}
	return budgetModel(b), nil
}

// setBudget is an admin's setBudget: the budget and its event commit together.
func (r *Resolver) setBudget(ctx context.Context, in model.SetBudgetInput) (*model.Budget, error) {
	rc := request.From(ctx)
	if rc == nil || rc.Anonymous || !rc.Actor.Has(auth.PermAdmin) {
		return nil, problem.New(problem.PermissionDenied, "setting a budget needs the admin permission")
	}
	if err := checkActorID("input.actor", in.Actor); err != nil {
		return nil, err
	}
	period := budget.None
	if in.Period != nil {
		period = budget.Period(strings.ToLower(string(*in.Period)))
	}
	d, err := r.dispatcher()
	if err != nil {
		return nil, err
	}
	var b *budget.Budget
	err = r.Store.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		b, err = d.Budgets().Set(ctx, tx.Conn(), in.Actor, in.LimitUsd, period, in.ResetSpent != nil && *in.ResetSpent, rc.Actor.ID, rc.Now)
		if err != nil {
			return err
		}
		payload := map[string]any{"actor": b.Actor, "limit_usd": b.LimitUSD, "period": b.Period, "spent_usd": b.SpentUSD,
			"held_usd": b.HeldUSD, "set_by": b.UpdatedBy}
		return tx.Store().ServerEvent(ctx, "setBudget", store.EventParams{Type: EventBudgetSet, Audience: []string{b.Actor}, Payload: payload})
	})
	if err != nil {
		return nil, err
	}
	return budgetModel(b), nil
}

func checkActorID(path, id string) error {
	if id == "" || len(id) > maxActorID {
		return problem.Invalid(problem.Field(path, "length", "an actor id is 1 to 256 characters", id))
	}
	return nil
}

func budgetModel(b *budget.Budget) *model.Budget {
	out := &model.Budget{Actor: b.Actor, LimitUsd: b.LimitUSD, Period: model.BudgetPeriod(strings.ToUpper(string(b.Period))),
		PeriodStart: b.Start, SpentUsd: b.SpentUSD, HeldUsd: b.HeldUSD, RemainingUsd: b.RemainingUSD(),
		OperatorDefault: b.Default, UpdatedAt: b.UpdatedAt, UpdatedBy: b.UpdatedBy}
	if !b.ResetsAt.IsZero() {
		t := b.ResetsAt
		out.ResetsAt = &t
	}
	return out
}
