-- Links between artifacts and the append-only signals table.

-- A typed edge. Both ends are artifacts (by pk, so joins stay cheap); to_hash pins
-- the target version when the link was made to one.
CREATE TABLE links (
    pk         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    from_pk    bigint NOT NULL REFERENCES artifacts (pk),
    predicate  text NOT NULL,
    to_pk      bigint NOT NULL REFERENCES artifacts (pk),
    to_hash    text,
    evidence   text[] NOT NULL DEFAULT '{}',
    created_by text NOT NULL REFERENCES actors (id),
    created_at timestamptz NOT NULL,
    CONSTRAINT links_edge_key UNIQUE (from_pk, predicate, to_pk)
);
CREATE INDEX links_to_idx ON links (to_pk, predicate, pk);
CREATE INDEX links_from_idx ON links (from_pk, pk);

-- Every signal ever given: votes, ranks, funding, calibration. Aggregation is
-- declared per kind in the schema and computed on read, so changing it never
-- rewrites what was given.
CREATE TABLE signals (
    pk          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    artifact_pk bigint NOT NULL REFERENCES artifacts (pk),
    kind        text NOT NULL,
    dimension   text NOT NULL DEFAULT 'default',
    voter       text NOT NULL REFERENCES actors (id),
    voter_kind  text NOT NULL,
    value       double precision NOT NULL,
    weight      double precision NOT NULL DEFAULT 1,
    unit        text,
    reason      text,
    metadata    jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL
);
CREATE INDEX signals_artifact_idx ON signals (artifact_pk, kind, dimension, voter, pk);
