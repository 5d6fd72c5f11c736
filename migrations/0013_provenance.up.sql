-- Provenance stamps (issue 9): who produced an artifact submitted as a result,
-- via which skill or tool. The write path stamps them from content.produced_by
-- and the tool dispatcher on a finished call's result artifact. They are not
-- links: an actor is not an artifact, and a stamp is the server's record of a
-- submission, not a claim a client asserts with evidence. Targets are
-- `actor:<id>`, `skill:<name>` or `tool:<name>`.
CREATE TABLE provenance_edges (
    pk         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_pk  bigint NOT NULL REFERENCES artifacts (pk),
    predicate  text NOT NULL CHECK (predicate IN ('produced_by_actor', 'produced_by_skill', 'produced_by_tool')),
    target     text NOT NULL,
    -- The version of the source that was stamped: an older version's
    -- provenance shows only the stamps made by then.
    version    integer NOT NULL,
    request_id text NOT NULL,
    -- The actor of the request that stamped (the submitter).
    stamped_by text NOT NULL,
    created_at timestamptz NOT NULL,
    -- Stamping is idempotent: the same edge again changes nothing.
    CONSTRAINT provenance_edges_edge_key UNIQUE (source_pk, predicate, target)
);
-- What an actor produced (Actor.produced), and what came from a tool or skill.
CREATE INDEX provenance_edges_target_idx ON provenance_edges (target, predicate, pk);
