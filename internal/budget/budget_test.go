package budget_test

import (
	"context"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/budget"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/problem"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

func dollars(v float64) *float64 { return &v }

// inTx runs f in a transaction of pool, committed when it returns nil.
func inTx(t *testing.T, pool *pgxpool.Pool, f func(ctx context.Context, tx pgxTx) error) error {
	t.Helper()
	ctx := t.Context()
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := f(ctx, tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

type pgxTx = dbsqlc.DBTX

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// A daily budget: holds and debits within a day, a new day spends from 0,
// and a refusal says when the budget starts again.
func TestPeriodRollsOver(t *testing.T) {
	pool := dbtest.Pool(t)
	b := budget.New(budget.Default{})
	day1 := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	if err := inTx(t, pool, func(ctx context.Context, tx pgxTx) error {
		_, err := b.Set(ctx, tx, "alice", dollars(1), budget.Day, false, "ada", day1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	hold := func(call string, est float64, at time.Time) error {
		return inTx(t, pool, func(ctx context.Context, tx pgxTx) error { return b.Hold(ctx, tx, "alice", call, est, at) })
	}
	settle := func(call string, cost float64, at time.Time) *budget.Budget {
		var out *budget.Budget
		if err := inTx(t, pool, func(ctx context.Context, tx pgxTx) (err error) {
			out, err = b.Settle(ctx, tx, "alice", call, cost, at)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if err := hold("c1", 0.75, day1); err != nil {
		t.Fatal(err)
	}
	if got := settle("c1", 0.5, day1); !near(got.SpentUSD, 0.5) || got.HeldUSD != 0 {
		t.Fatalf("after c1: %+v", got)
	}
	err := hold("c2", 0.75, day1)
	p, ok := problem.As(err)
	if !ok || p.Code != problem.BudgetExceeded || p.RetryAfter != time.Hour || !p.Retryable() {
		t.Fatalf("a hold past the budget: %v (retry after %v)", err, p.RetryAfter)
	}
	x := p.Extra.(*budget.Exceeded)
	if !near(x.EstimateUSD, 0.75) || !near(*x.Budget.RemainingUSD(), 0.5) || !x.Budget.ResetsAt.Equal(day1.Add(time.Hour)) {
		t.Fatalf("the refusal: %+v %+v", x, x.Budget)
	}
	// The next day: spending starts again.
	day2 := day1.Add(2 * time.Hour)
	if err := hold("c2", 0.75, day2); err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(t.Context(), pool, "alice", day2)
	if err != nil || got.SpentUSD != 0 || !near(got.HeldUSD, 0.75) || !got.Start.Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("day 2: %+v %v", got, err)
	}
	// A hold taken before a rollover is released by its finish after it.
	if got := settle("c2", 0.25, day2.Add(25*time.Hour)); !near(got.SpentUSD, 0.25) || got.HeldUSD != 0 {
		t.Fatalf("settled on day 3: %+v", got)
	}
	// More than the whole limit is never retryable.
	if p, _ := problem.As(hold("c3", 5, day2)); p == nil || p.Retryable() {
		t.Fatalf("an estimate over the limit: %+v", p)
	}
}

// Setting a budget keeps what was spent in the same period; a new period, or
// reset, starts at 0; a default budget is written on the first costed call.
func TestSetAndDefault(t *testing.T) {
	pool := dbtest.Pool(t)
	now := time.Date(2026, 12, 9, 12, 0, 0, 0, time.UTC) // a Wednesday
	b := budget.New(budget.Default{LimitUSD: dollars(2), Period: budget.Week})
	got, err := b.Get(t.Context(), pool, "bob", now)
	if err != nil || !got.Default || *got.LimitUSD != 2 || !got.Start.Equal(time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)) || got.UpdatedBy != budget.Operator {
		t.Fatalf("bob's default: %+v %v", got, err)
	}
	run := func(f func(ctx context.Context, tx pgxTx) error) {
		t.Helper()
		if err := inTx(t, pool, f); err != nil {
			t.Fatal(err)
		}
	}
	run(func(ctx context.Context, tx pgxTx) error { return b.Hold(ctx, tx, "bob", "b1", 1.5, now) })
	run(func(ctx context.Context, tx pgxTx) error {
		_, err := b.Settle(ctx, tx, "bob", "b1", 1.5, now)
		return err
	})
	if got, _ := b.Get(t.Context(), pool, "bob", now); !got.Default || !near(got.SpentUSD, 1.5) {
		t.Fatalf("bob after a call: %+v", got)
	}
	set := func(limit *float64, p budget.Period, reset bool) *budget.Budget {
		var out *budget.Budget
		run(func(ctx context.Context, tx pgxTx) (err error) {
			out, err = b.Set(ctx, tx, "bob", limit, p, reset, "ada", now)
			return err
		})
		return out
	}
	if got := set(dollars(3), budget.Week, false); got.Default || !near(got.SpentUSD, 1.5) || !near(*got.RemainingUSD(), 1.5) {
		t.Fatalf("a raise in the same period: %+v", got)
	}
	if got := set(dollars(3), budget.Month, false); got.SpentUSD != 0 || !got.ResetsAt.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("a new period: %+v", got)
	}
	if got := set(nil, budget.None, false); got.LimitUSD != nil || got.RemainingUSD() != nil || !got.ResetsAt.IsZero() {
		t.Fatalf("no limit: %+v", got)
	}
	err = inTx(t, pool, func(ctx context.Context, tx pgxTx) error {
		_, err := b.Set(ctx, tx, "bob", dollars(math.Inf(1)), budget.None, false, "ada", now)
		return err
	})
	if p, ok := problem.As(err); !ok || p.Code != problem.ValidationFailed {
		t.Fatalf("an infinite budget: %v", err)
	}
}

// Holds taken at once never pass the limit together.
func TestConcurrentHolds(t *testing.T) {
	pool := dbtest.Pool(t)
	b := budget.New(budget.Default{LimitUSD: dollars(1)})
	now := time.Now()
	var (
		wg           sync.WaitGroup
		mu           sync.Mutex
		held, refuse int
	)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := inTx(t, pool, func(ctx context.Context, tx pgxTx) error {
				return b.Hold(ctx, tx, "carol", "call-"+string(rune('a'+i)), 0.1, now)
			})
			mu.Lock()
			defer mu.Unlock()
			if p, ok := problem.As(err); ok && p.Code == problem.BudgetExceeded {
				refuse++
			} else if err != nil {
				t.Error(err)
			} else {
				held++
			}
		}()
	}
	wg.Wait()
	got, err := b.Get(t.Context(), pool, "carol", now)
	if err != nil || held != 10 || refuse != 10 || !near(got.HeldUSD, 1) {
		t.Fatalf("%d held, %d refused: %+v %v", held, refuse, got, err)
	}
}
