-- name: SignalInsert :one
INSERT INTO signals (artifact_pk, kind, dimension, voter, voter_kind, value, weight, unit, reason, metadata, created_at, opponent_pk)
VALUES (@artifact_pk, @kind, @dimension, @voter, @voter_kind, @value, @weight, @unit, @reason, @metadata, @created_at, sqlc.narg(opponent_pk))
RETURNING pk;

-- name: SignalAggregates :many
-- Per artifact, kind and dimension, every figure the aggregations need, for many
-- artifacts in one statement: over each voter's latest value (replace), over all
-- values (sum, and the quadratic-funding total over funders), and the latest value
-- (append). The caller reports what the type's schema declares.
WITH s AS (
    SELECT * FROM signals WHERE artifact_pk = ANY (@pks::bigint[])
), latest AS (
    SELECT DISTINCT ON (artifact_pk, kind, dimension, voter) artifact_pk, kind, dimension, voter, value
    FROM s ORDER BY artifact_pk, kind, dimension, voter, pk DESC
), by_latest AS (
    SELECT artifact_pk, kind, dimension,
        count(*) AS voters, avg(value) AS mean, sum(value) AS total,
        count(*) FILTER (WHERE value > 0) AS positive, count(*) FILTER (WHERE value < 0) AS negative
    FROM latest GROUP BY artifact_pk, kind, dimension
), per_voter AS (
    SELECT artifact_pk, kind, dimension, voter, sum(value) AS total, count(*) AS n
    FROM s GROUP BY artifact_pk, kind, dimension, voter
), by_all AS (
    SELECT artifact_pk, kind, dimension, sum(total) AS total, sum(n) AS n,
        power(sum(sqrt(greatest(total, 0))), 2) AS quadratic
    FROM per_voter GROUP BY artifact_pk, kind, dimension
), last AS (
    SELECT DISTINCT ON (artifact_pk, kind, dimension) artifact_pk, kind, dimension, value, unit
    FROM s ORDER BY artifact_pk, kind, dimension, pk DESC
)
SELECT last.artifact_pk, last.kind, last.dimension,
    last.value::float8 AS last_value, last.unit AS last_unit,
    by_all.n::integer AS all_count, by_all.total::float8 AS all_total, by_all.quadratic::float8 AS quadratic_total,
    by_latest.voters::integer AS voters, by_latest.mean::float8 AS latest_mean, by_latest.total::float8 AS latest_total,
    by_latest.positive::integer AS latest_positive, by_latest.negative::integer AS latest_negative
FROM last
JOIN by_latest USING (artifact_pk, kind, dimension)
JOIN by_all USING (artifact_pk, kind, dimension);

-- name: SignalHistory :many
-- Every signal of one kind on many artifacts, oldest first (forecast histories).
SELECT artifact_pk, voter, value, created_at FROM signals
WHERE artifact_pk = ANY (@pks::bigint[]) AND kind = @kind
ORDER BY artifact_pk, pk;

-- name: MarketState :many
-- A prediction market's trades on an artifact (tools/market), by side: the
-- shares held in all, the trades, the volume, and the given trader's shares,
-- spending (each trade's metadata.cost_usd) and trades.
SELECT dimension,
       sum(value)::float8 AS shares, count(*)::integer AS trades, sum(abs(value))::float8 AS volume,
       coalesce(sum(value) FILTER (WHERE voter = @trader::text), 0)::float8 AS mine,
       coalesce(sum((metadata->>'cost_usd')::float8) FILTER (WHERE voter = @trader::text), 0)::float8 AS spent,
       (count(*) FILTER (WHERE voter = @trader::text))::integer AS my_trades
FROM signals WHERE artifact_pk = @artifact_pk AND kind = @kind GROUP BY dimension;

-- name: MarketLock :exec
-- One trade of a market at a time, for the rest of the transaction: the next
-- is priced on the state this one leaves.
SELECT pg_advisory_xact_lock(hashtextextended('market/' || @artifact_pk::bigint, 0));
