-- Aggregation views over signals (docs/leaderboards.md): duels name their
-- opponent, and Elo ratings, which depend on every duel in order, are cached
-- per view and recomputed when the duels they were computed from change.

-- The opponent of a duel signal (a kind declaring "opponent": true): an
-- artifact of the same type; the signal's value is the signalled artifact's
-- score against it (1 win, 0.5 draw, 0 loss).
ALTER TABLE signals ADD COLUMN opponent_pk bigint REFERENCES artifacts (pk);

-- A view's freshness check counts the signals of one kind.
CREATE INDEX signals_kind_idx ON signals (kind, artifact_pk, pk);

-- One cached view: what it was computed from. It is fresh while the signals of
-- its kind on its type still number signal_count with the newest last_signal_pk
-- (signals are append-only, so any new one changes the pair, whatever order
-- concurrent writers commit in) and its declaration still has fingerprint.
CREATE TABLE view_cache (
    type           text NOT NULL,
    view           text NOT NULL,
    fingerprint    text NOT NULL,
    signal_count   bigint NOT NULL,
    last_signal_pk bigint NOT NULL,
    computed_at    timestamptz NOT NULL,
    PRIMARY KEY (type, view)
);

-- The scores of a cached view: one row per artifact that has played.
CREATE TABLE view_scores (
    type        text NOT NULL,
    view        text NOT NULL,
    artifact_pk bigint NOT NULL REFERENCES artifacts (pk),
    score       double precision NOT NULL,
    games       integer NOT NULL,
    wins        integer NOT NULL,
    losses      integer NOT NULL,
    draws       integer NOT NULL,
    PRIMARY KEY (type, view, artifact_pk),
    FOREIGN KEY (type, view) REFERENCES view_cache (type, view) ON DELETE CASCADE
);
-- A leaderboard page: best first, ties by artifact.
CREATE INDEX view_scores_rank_idx ON view_scores (type, view, score DESC, artifact_pk);
