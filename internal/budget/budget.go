// Package budget owns what actors may spend on tool calls (SPEC-002 §6).
//
// A budget is an actor's limit in US dollars, over a period (none, or a UTC
// day, week or month after which spending starts again at 0). A call whose
// tool can cost something holds its estimate — the most the call can cost —
// against its caller's budget when it is recorded, in the transaction that
// records it: Hold refuses it there with a BUDGET_EXCEEDED problem, and the
// call is never written. Whatever finishes the call (its run, the queue's
// worker, the recovery of a lost call, a work packet's completion or expiry)
// calls Settle in the finish's transaction: the hold is released and what the
// call cost is spent. Holds are one row per call, so a finish that is written
// twice (it cannot: the ledger's transition is one write) would still settle
// once.
//
// The package writes only its own two tables (migration 0018), through the
// transaction it is handed; it knows nothing of tools or the store.
package budget

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/problem"
)

// Period is how often spending starts again.
type Period string

// The periods.
const (
	None  Period = "none"
	Day   Period = "day"
	Week  Period = "week"
	Month Period = "month"
)

// ParsePeriod reads a period's name ("" is none).
func ParsePeriod(s string) (Period, error) {
	switch p := Period(s); p {
	case "":
		return None, nil
	case None, Day, Week, Month:
		return p, nil
	}
	return "", fmt.Errorf("budget period %q is not one of none, day, week, month", s)
}

// start is when the period holding at begins (UTC); for None, since: a budget
// without a period keeps the start it was set at.
func (p Period) start(at, since time.Time) time.Time {
	at = at.UTC()
	y, m, d := at.Date()
	switch p {
	case Day:
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case Week: // ISO weeks start on Monday
		day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	case Month:
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	}
	return since
}

// next is when the period starting at start ends (zero for None).
func (p Period) next(start time.Time) time.Time {
	switch p {
	case Day:
		return start.AddDate(0, 0, 1)
	case Week:
		return start.AddDate(0, 0, 7)
	case Month:
		return start.AddDate(0, 1, 0)
	}
	return time.Time{}
}

// Default is the operator's budget for actors an admin set none for: nil
// limit is no limit.
type Default struct {
	LimitUSD *float64
	Period   Period
}

// Budget is an actor's budget as it stands.
type Budget struct {
	Actor string
	// LimitUSD is nil for no limit.
	LimitUSD *float64
	Period   Period
	// Start is when the current period began; ResetsAt when it ends (zero
	// for a budget without a period).
	Start, ResetsAt time.Time
	SpentUSD        float64
	HeldUSD         float64
	// Default says no admin set this actor's budget: it is the operator's.
	Default   bool
	UpdatedAt time.Time
	UpdatedBy string
}

// RemainingUSD is what the actor may still hold or spend (nil: no limit).
func (b *Budget) RemainingUSD() *float64 {
	if b.LimitUSD == nil {
		return nil
	}
	r := round(math.Max(0, *b.LimitUSD-b.SpentUSD-b.HeldUSD))
	return &r
}

// Exceeded is the Extra of a BUDGET_EXCEEDED problem: the estimate refused
// and the budget it would not fit.
type Exceeded struct {
	EstimateUSD float64
	Budget      *Budget
}

// Budgets reads and writes actors' budgets.
type Budgets struct {
	def Default
}

// New returns the budgets with the operator's default.
func New(def Default) *Budgets {
	if def.Period == "" {
		def.Period = None
	}
	return &Budgets{def: def}
}

// Get is actor's budget as it stands at now, read through q.
func (b *Budgets) Get(ctx context.Context, q dbsqlc.DBTX, actor string, now time.Time) (*Budget, error) {
	row, err := dbsqlc.New(q).BudgetGet(ctx, actor)
	if errors.Is(err, pgx.ErrNoRows) {
		return b.fresh(actor, now), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the budget of %s: %w", actor, err)
	}
	return rolled(fromRow(row), now), nil
}

// fresh is the operator's default budget of an actor without a row.
func (b *Budgets) fresh(actor string, now time.Time) *Budget {
	start := b.def.Period.start(now, now)
	return &Budget{Actor: actor, LimitUSD: b.def.LimitUSD, Period: b.def.Period, Start: start,
		ResetsAt: b.def.Period.next(start), Default: true, UpdatedAt: now, UpdatedBy: Operator}
}

// lock reads actor's budget for update in tx, rolled to now's period; ok is
// false when the actor has no row and the operator set no default limit
// (nothing to count against).
func (b *Budgets) lock(ctx context.Context, tx dbsqlc.DBTX, actor string, now time.Time) (bud *Budget, ok bool, err error) {
	q := dbsqlc.New(tx)
	row, err := q.BudgetLock(ctx, actor)
	if errors.Is(err, pgx.ErrNoRows) {
		if b.def.LimitUSD == nil {
			return nil, false, nil
		}
		f := b.fresh(actor, now)
		if err := q.BudgetCreate(ctx, dbsqlc.BudgetCreateParams{ActorID: actor, LimitUsd: f.LimitUSD,
			Period: string(f.Period), PeriodStart: f.Start, UpdatedAt: now}); err != nil {
			return nil, false, fmt.Errorf("write the default budget of %s: %w", actor, err)
		}
		row, err = q.BudgetLock(ctx, actor)
	}
	if err != nil {
		return nil, false, fmt.Errorf("lock the budget of %s: %w", actor, err)
	}
	return rolled(fromRow(row), now), true, nil
}

// Hold holds estimate against actor's budget for the call callID, in tx (the
// transaction recording the call), or refuses with BUDGET_EXCEEDED when it
// does not fit what remains. An estimate of 0 holds nothing.
func (b *Budgets) Hold(ctx context.Context, tx dbsqlc.DBTX, actor, callID string, estimate float64, now time.Time) error {
	if !(estimate > 0) {
		return nil
	}
	estimate = round(estimate)
	bud, ok, err := b.lock(ctx, tx, actor, now)
	if err != nil || !ok {
		return err
	}
	if bud.LimitUSD != nil && round(bud.SpentUSD+bud.HeldUSD+estimate) > *bud.LimitUSD {
		return exceeded(bud, estimate, now)
	}
	bud.HeldUSD = round(bud.HeldUSD + estimate)
	q := dbsqlc.New(tx)
	if err := q.BudgetWrite(ctx, dbsqlc.BudgetWriteParams{ActorID: actor, PeriodStart: bud.Start,
		SpentUsd: bud.SpentUSD, HeldUsd: bud.HeldUSD}); err != nil {
		return fmt.Errorf("hold on the budget of %s: %w", actor, err)
	}
	if err := q.BudgetHoldPut(ctx, dbsqlc.BudgetHoldPutParams{CallID: callID, ActorID: actor, AmountUsd: estimate, CreatedAt: now}); err != nil {
		return fmt.Errorf("hold on the budget of %s: %w", actor, err)
	}
	return nil
}

// Settle is the finish of the call callID, in tx (the finish's transaction):
// its hold, if it took one, is released and cost is spent by actor, the
// caller. It returns the budget after (nil when the actor has none to count
// against).
func (b *Budgets) Settle(ctx context.Context, tx dbsqlc.DBTX, actor, callID string, cost float64, now time.Time) (*Budget, error) {
	q := dbsqlc.New(tx)
	held := 0.0
	switch h, err := q.BudgetHoldTake(ctx, callID); {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("release the budget hold of call %s: %w", callID, err)
	default:
		actor, held = h.ActorID, h.AmountUsd // the hold's actor is the caller
	}
	if !(cost > 0) && held == 0 {
		return nil, nil
	}
	bud, ok, err := b.lock(ctx, tx, actor, now)
	if err != nil || !ok {
		return nil, err
	}
	bud.HeldUSD = round(math.Max(0, bud.HeldUSD-held))
	if cost > 0 {
		bud.SpentUSD = round(bud.SpentUSD + cost)
	}
	if err := q.BudgetWrite(ctx, dbsqlc.BudgetWriteParams{ActorID: actor, PeriodStart: bud.Start,
		SpentUsd: bud.SpentUSD, HeldUsd: bud.HeldUSD}); err != nil {
		return nil, fmt.Errorf("debit the budget of %s: %w", actor, err)
	}
	return bud, nil
}

// Credit gives amount back to actor's budget, in tx: what a sale in a market
// returns of what its purchases spent (tools/market). Spending in the current
// period goes down by it, never below 0 (a credit does not carry into a new
// period, nor raise the limit). It returns the budget after (nil when the
// actor has none to count against).
func (b *Budgets) Credit(ctx context.Context, tx dbsqlc.DBTX, actor string, amount float64, now time.Time) (*Budget, error) {
	if !(amount > 0) || math.IsInf(amount, 1) {
		return nil, nil
	}
	bud, ok, err := b.lock(ctx, tx, actor, now)
	if err != nil || !ok {
		return nil, err
	}
	bud.SpentUSD = round(math.Max(0, bud.SpentUSD-amount))
	if err := dbsqlc.New(tx).BudgetWrite(ctx, dbsqlc.BudgetWriteParams{ActorID: actor, PeriodStart: bud.Start,
		SpentUsd: bud.SpentUSD, HeldUsd: bud.HeldUSD}); err != nil {
		return nil, fmt.Errorf("credit the budget of %s: %w", actor, err)
	}
	return bud, nil
}

// Set is an admin's setBudget, in tx: actor's limit (nil: none) and period.
// Spending so far stands within the same period; a new period starts at 0,
// as does reset.
func (b *Budgets) Set(ctx context.Context, tx dbsqlc.DBTX, actor string, limit *float64, period Period, reset bool, by string, now time.Time) (*Budget, error) {
	if limit != nil && !(*limit >= 0 && !math.IsInf(*limit, 1)) {
		return nil, problem.Invalid(problem.Field("input.limitUsd", "minimum", fmt.Sprintf("a budget is a number of dollars, at least 0, not %v", *limit), nil))
	}
	q := dbsqlc.New(tx)
	cur := b.fresh(actor, now)
	cur.SpentUSD = 0
	switch row, err := q.BudgetLock(ctx, actor); {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("lock the budget of %s: %w", actor, err)
	default:
		cur = rolled(fromRow(row), now)
	}
	next := *cur
	if limit != nil {
		l := round(*limit)
		limit = &l
	}
	next.LimitUSD, next.Period, next.Default, next.UpdatedAt, next.UpdatedBy = limit, period, false, now, by
	if period != cur.Period || reset {
		next.SpentUSD, next.Start = 0, period.start(now, now)
	}
	next.ResetsAt = period.next(next.Start)
	if err := q.BudgetPut(ctx, dbsqlc.BudgetPutParams{ActorID: actor, LimitUsd: next.LimitUSD, Period: string(next.Period),
		PeriodStart: next.Start, SpentUsd: next.SpentUSD, UpdatedAt: now, UpdatedBy: by}); err != nil {
		return nil, fmt.Errorf("set the budget of %s: %w", actor, err)
	}
	return &next, nil
}

// exceeded is the refusal of estimate against bud.
func exceeded(bud *Budget, estimate float64, now time.Time) *problem.Problem {
	remaining := *bud.RemainingUSD()
	msg := fmt.Sprintf("this call can cost up to $%s, and your budget has $%s left (limit $%s, spent $%s, held by unfinished calls $%s)",
		dollars(estimate), dollars(remaining), dollars(*bud.LimitUSD), dollars(bud.SpentUSD), dollars(bud.HeldUSD))
	p := &problem.Problem{Code: problem.BudgetExceeded, Extra: &Exceeded{EstimateUSD: estimate, Budget: bud}}
	if !bud.ResetsAt.IsZero() && estimate <= *bud.LimitUSD {
		// A new period's budget can hold it: say when it starts.
		p.RetryAfter = bud.ResetsAt.Sub(now)
		msg += fmt.Sprintf("; spending starts again at %s", bud.ResetsAt.Format(time.RFC3339))
	} else {
		msg += "; an admin can raise it (setBudget)"
	}
	p.Message = msg
	return p
}

// rolled is bud in now's period: spending starts again in a new one.
func rolled(bud *Budget, now time.Time) *Budget {
	if s := bud.Period.start(now, bud.Start); s.After(bud.Start) {
		bud.Start, bud.SpentUSD = s, 0
	}
	bud.ResetsAt = bud.Period.next(bud.Start)
	return bud
}

func fromRow(r dbsqlc.ActorBudget) *Budget {
	return &Budget{Actor: r.ActorID, LimitUSD: r.LimitUsd, Period: Period(r.Period), Start: r.PeriodStart.UTC(),
		SpentUSD: r.SpentUsd, HeldUSD: r.HeldUsd, UpdatedAt: r.UpdatedAt, UpdatedBy: orOperator(r.UpdatedBy), Default: r.UpdatedBy == ""}
}

// Operator is who set a default budget.
const Operator = "operator"

func orOperator(by string) string {
	if by == "" {
		return Operator
	}
	return by
}

// round keeps dollars to the micro-dollar, as the tables do.
func round(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func dollars(v float64) string { return fmt.Sprintf("%.6g", v) }
