-- The ledger's live calls (issue 15): every queued or running tool_call, by
-- status and the process running it. The sweep that recovers the calls of a
-- process that stopped beating, and expires the work packets nobody took,
-- reads only these rows instead of every tool_call ever made.
--
-- A partial expression index rather than a table of live calls: a table would
-- be one more write in every call's transaction (the fast path's one-statement
-- record among them) and one more thing that can disagree with the ledger; the
-- index is kept by PostgreSQL, holds only the few unfinished calls (a finished
-- one leaves it when its record is written), and costs the fast path nothing,
-- whose record is finished when it is first written and never enters it.
CREATE INDEX artifacts_tool_call_live_idx ON artifacts ((content->>'status'), (content->>'worker'))
    WHERE type = 'tool_call' AND content->>'status' IN ('queued', 'running');
