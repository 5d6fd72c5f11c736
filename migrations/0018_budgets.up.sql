-- Per-actor budgets (SPEC-002 §6): what an actor may spend on tool calls.
--
-- A call whose tool can cost something holds its estimate (the most it can
-- cost) when it is recorded, in the same transaction: refused there, nothing
-- is written. Its finish, whatever the path, releases the hold and debits
-- what it actually cost. So spent + held never passes the limit by more than
-- what finished calls cost beyond their estimate (a work packet's agent
-- reports its own spending).
--
-- An actor without a row has the operator's default budget, if one is set
-- (the row is then written on the actor's first costed call), else no limit.
CREATE TABLE actor_budgets (
    actor_id     text PRIMARY KEY,
    -- NULL: no limit (spending is still counted).
    limit_usd    numeric(18, 6) CHECK (limit_usd >= 0),
    -- spent_usd starts again at 0 at the start of each period (UTC).
    period       text NOT NULL DEFAULT 'none' CHECK (period IN ('none', 'day', 'week', 'month')),
    period_start timestamptz NOT NULL,
    spent_usd    numeric(18, 6) NOT NULL DEFAULT 0 CHECK (spent_usd >= 0),
    held_usd     numeric(18, 6) NOT NULL DEFAULT 0 CHECK (held_usd >= 0),
    updated_at   timestamptz NOT NULL,
    -- The admin who set it; '' for the operator's default.
    updated_by   text NOT NULL
);

-- The estimate each unfinished costed call holds against its caller's budget.
CREATE TABLE budget_holds (
    call_id    text PRIMARY KEY,
    actor_id   text NOT NULL,
    amount_usd numeric(18, 6) NOT NULL CHECK (amount_usd > 0),
    created_at timestamptz NOT NULL
);
CREATE INDEX budget_holds_actor_idx ON budget_holds (actor_id);
