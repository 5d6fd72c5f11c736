-- The delegation lineage as SPEC-001 §4.1 writes it: each step of a token's
-- delegation_chain with its session and task ([{actor_id, session_id?,
-- task_id?}], outermost first), and the task the writing session worked on.
-- delegation_chain keeps the steps' actor ids, as before.
ALTER TABLE write_journal
    ADD COLUMN task_id text,
    ADD COLUMN delegation jsonb NOT NULL DEFAULT '[]';

-- Rows written before knew only the actors.
UPDATE write_journal
SET delegation = (SELECT jsonb_agg(jsonb_build_object('actor_id', a) ORDER BY n)
                  FROM unnest(delegation_chain) WITH ORDINALITY AS s(a, n))
WHERE delegation_chain <> '{}';
