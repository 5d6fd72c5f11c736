DROP TABLE IF EXISTS budget_holds;
DROP TABLE IF EXISTS actor_budgets;
