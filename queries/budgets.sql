-- name: BudgetLock :one
-- An actor's budget, locked until the transaction ends: a hold and a debit
-- of the same actor's calls take turns.
SELECT * FROM actor_budgets WHERE actor_id = @actor_id FOR UPDATE;

-- name: BudgetGet :one
SELECT * FROM actor_budgets WHERE actor_id = @actor_id;

-- name: BudgetCreate :exec
-- The operator's default budget, written on an actor's first costed call (a
-- concurrent first call wrote it already: nothing changes).
INSERT INTO actor_budgets (actor_id, limit_usd, period, period_start, updated_at, updated_by)
VALUES (@actor_id, sqlc.narg(limit_usd), @period, @period_start, @updated_at, '')
ON CONFLICT (actor_id) DO NOTHING;

-- name: BudgetPut :exec
-- Writes an actor's limit, period and spending (an admin's setBudget, read
-- and decided under BudgetLock); what its calls hold stands.
INSERT INTO actor_budgets (actor_id, limit_usd, period, period_start, spent_usd, updated_at, updated_by)
VALUES (@actor_id, sqlc.narg(limit_usd), @period, @period_start, @spent_usd, @updated_at, @updated_by)
ON CONFLICT (actor_id) DO UPDATE
SET limit_usd = EXCLUDED.limit_usd, period = EXCLUDED.period, period_start = EXCLUDED.period_start,
    spent_usd = EXCLUDED.spent_usd, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by;

-- name: BudgetWrite :exec
-- A locked budget's new spending: its period (rolled over, maybe), what it
-- spent in it and what its calls hold.
UPDATE actor_budgets
SET period_start = @period_start, spent_usd = @spent_usd, held_usd = @held_usd
WHERE actor_id = @actor_id;

-- name: BudgetHoldPut :exec
INSERT INTO budget_holds (call_id, actor_id, amount_usd, created_at)
VALUES (@call_id, @actor_id, @amount_usd, @created_at);

-- name: BudgetHoldTake :one
-- A call's hold, released: its finish debits what it cost instead.
DELETE FROM budget_holds WHERE call_id = @call_id RETURNING actor_id, amount_usd;
