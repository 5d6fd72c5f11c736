-- Aggregation views over signals (internal/views, docs/leaderboards.md). Every
-- page is one statement over the view's signals or its cache, whatever its
-- size; the visibility condition is store.privateSQL's, written out:
-- an admin sees everything, anyone else public artifacts and the ones they
-- created, take part in or received.

-- name: ViewFreshness :one
-- What the cache of one view was computed from, beside what it would be
-- computed from now: the number of signals of the view's kind on its type and
-- the newest.
SELECT f.n::bigint AS signal_count, f.last_pk::bigint AS last_signal_pk,
    c.fingerprint AS cached_fingerprint, c.signal_count AS cached_signal_count, c.last_signal_pk AS cached_last_signal_pk
FROM (
    SELECT count(*) AS n, coalesce(max(s.pk), 0) AS last_pk
    FROM signals s JOIN artifacts a ON a.pk = s.artifact_pk
    WHERE s.kind = @kind AND a.type = @type
) f
LEFT JOIN view_cache c ON c.type = @type AND c.view = @view;

-- name: ViewLock :exec
-- Serialises the recomputations of one view (transaction-scoped).
SELECT pg_advisory_xact_lock(hashtextextended(@type::text || '/' || @view::text, 21));

-- name: ViewDuels :many
-- Every duel of one kind between artifacts of one type, oldest first.
SELECT s.pk, s.artifact_pk, s.opponent_pk::bigint AS opponent_pk, s.voter, s.value
FROM signals s JOIN artifacts a ON a.pk = s.artifact_pk
WHERE s.kind = @kind AND a.type = @type AND s.opponent_pk IS NOT NULL
ORDER BY s.pk;

-- name: ViewCacheUpsert :exec
INSERT INTO view_cache (type, view, fingerprint, signal_count, last_signal_pk, computed_at)
VALUES (@type, @view, @fingerprint, @signal_count, @last_signal_pk, @computed_at)
ON CONFLICT (type, view) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, signal_count = EXCLUDED.signal_count,
    last_signal_pk = EXCLUDED.last_signal_pk, computed_at = EXCLUDED.computed_at;

-- name: ViewScoresDelete :exec
DELETE FROM view_scores WHERE type = @type AND view = @view;

-- name: ViewScoresInsert :exec
INSERT INTO view_scores (type, view, artifact_pk, score, games, wins, losses, draws)
SELECT @type::text, @view::text, unnest(@artifact_pks::bigint[]), unnest(@scores::float8[]), unnest(@games::integer[]),
    unnest(@wins::integer[]), unnest(@losses::integer[]), unnest(@draws::integer[]);

-- name: ViewEloPage :many
-- A page of a cached Elo view, best first, after the keyset (after_score,
-- after_pk) when given.
SELECT v.artifact_pk, v.score, v.games, v.wins, v.losses, v.draws
FROM view_scores v JOIN artifacts a ON a.pk = v.artifact_pk
WHERE v.type = @type AND v.view = @view
  AND (sqlc.narg(after_score)::float8 IS NULL
       OR v.score < sqlc.narg(after_score)::float8
       OR (v.score = sqlc.narg(after_score)::float8 AND v.artifact_pk > @after_pk::bigint))
  AND (@admin::boolean OR a.visibility = 'public' OR a.created_by = @actor::text OR @actor::text = ANY (a.participants)
       OR EXISTS (SELECT 1 FROM message_deliveries md WHERE md.message_pk = a.pk AND md.recipient = @actor::text))
ORDER BY v.score DESC, v.artifact_pk
LIMIT @lim::integer;

-- name: ViewEloOne :one
-- One artifact's rating in a cached Elo view, with its place: 1 + the number
-- of artifacts rated above it.
SELECT v.score, v.games, v.wins, v.losses, v.draws,
    (SELECT count(*) FROM view_scores o WHERE o.type = v.type AND o.view = v.view
        AND (o.score > v.score OR (o.score = v.score AND o.artifact_pk < v.artifact_pk)))::integer + 1 AS rank
FROM view_scores v
WHERE v.type = @type AND v.view = @view AND v.artifact_pk = @artifact_pk;

-- name: ViewDecayPage :many
-- A page of a decay-weighted view as of as_of: each counted signal's value *
-- weight * 0.5^(age / half_life), summed per artifact, best first. Signals
-- after as_of are not counted; with latest_only (a replace kind) only each
-- voter's latest as of then. Scores are rounded to 1e-9 so that every page
-- computes the same numbers its cursor compares.
WITH p AS (
    SELECT @as_of::timestamptz AS as_of, @half_life_hours::float8 AS half_life_hours
), counted AS (
    SELECT s.artifact_pk, s.value, s.weight, date_part('epoch', p.as_of - s.created_at) / 3600.0 AS age_hours,
        row_number() OVER (PARTITION BY s.artifact_pk, s.voter ORDER BY s.pk DESC) AS nth
    FROM p, signals s JOIN artifacts a ON a.pk = s.artifact_pk
    WHERE a.type = @type AND s.kind = @kind AND s.dimension = @dimension AND s.created_at <= p.as_of
), scored AS (
    SELECT c.artifact_pk,
        round(sum(c.value * c.weight * power(0.5::float8, c.age_hours / p.half_life_hours))::numeric, 9)::float8 AS score,
        count(*)::integer AS n
    FROM p, counted c WHERE c.nth = 1 OR NOT @latest_only::boolean
    GROUP BY c.artifact_pk
)
SELECT sc.artifact_pk, sc.score, sc.n
FROM scored sc JOIN artifacts a ON a.pk = sc.artifact_pk
WHERE (sqlc.narg(after_score)::float8 IS NULL
       OR sc.score < sqlc.narg(after_score)::float8
       OR (sc.score = sqlc.narg(after_score)::float8 AND sc.artifact_pk > @after_pk::bigint))
  AND (@admin::boolean OR a.visibility = 'public' OR a.created_by = @actor::text OR @actor::text = ANY (a.participants)
       OR EXISTS (SELECT 1 FROM message_deliveries md WHERE md.message_pk = a.pk AND md.recipient = @actor::text))
ORDER BY sc.score DESC, sc.artifact_pk
LIMIT @lim::integer;

-- name: ViewMarketPage :many
-- A page of a market view as of as_of: each artifact's YES price under an
-- LMSR of liquidity b over its trades (signals of the kind, dimension yes or
-- no, shares summed: 1 / (1 + e^((q_no - q_yes) / b)), the exponent clamped
-- within float8), highest first. Artifacts never traded are not listed.
-- Prices are rounded to 1e-9 so every page computes the numbers its cursor
-- compares.
WITH q AS (
    SELECT s.artifact_pk,
        coalesce(sum(s.value) FILTER (WHERE s.dimension = 'yes'), 0)::float8 AS q_yes,
        coalesce(sum(s.value) FILTER (WHERE s.dimension = 'no'), 0)::float8 AS q_no,
        count(*)::integer AS n
    FROM signals s JOIN artifacts a ON a.pk = s.artifact_pk
    WHERE a.type = @type AND s.kind = @kind AND s.created_at <= @as_of::timestamptz
    GROUP BY s.artifact_pk
), scored AS (
    SELECT q.artifact_pk, q.n,
        round((1.0 / (1.0 + exp(least(greatest((q.q_no - q.q_yes) / @liquidity::float8, -700.0), 700.0))))::numeric, 9)::float8 AS score
    FROM q
)
SELECT sc.artifact_pk, sc.score, sc.n
FROM scored sc JOIN artifacts a ON a.pk = sc.artifact_pk
WHERE (sqlc.narg(after_score)::float8 IS NULL
       OR sc.score < sqlc.narg(after_score)::float8
       OR (sc.score = sqlc.narg(after_score)::float8 AND sc.artifact_pk > @after_pk::bigint))
  AND (@admin::boolean OR a.visibility = 'public' OR a.created_by = @actor::text OR @actor::text = ANY (a.participants)
       OR EXISTS (SELECT 1 FROM message_deliveries md WHERE md.message_pk = a.pk AND md.recipient = @actor::text))
ORDER BY sc.score DESC, sc.artifact_pk
LIMIT @lim::integer;

-- name: ViewBrierPage :many
-- A page of a Brier view: forecasters by the mean (p - outcome)^2 of their
-- forecasts (made by as_of) on the artifacts of the type that have resolved
-- (their lifecycle state is one of states, resolving to the outcome at the
-- same place), best (lowest) first, ties by forecaster.
WITH f AS (
    SELECT s.voter, (s.value - o.outcome) * (s.value - o.outcome) AS b
    FROM signals s
    JOIN artifacts a ON a.pk = s.artifact_pk
    JOIN (SELECT unnest(@states::text[]) AS state, unnest(@outcomes::float8[]) AS outcome) o ON o.state = a.lifecycle_state
    WHERE a.type = @type AND s.kind = @kind AND s.created_at <= @as_of::timestamptz
      AND (@admin::boolean OR a.visibility = 'public' OR a.created_by = @actor::text OR @actor::text = ANY (a.participants)
           OR EXISTS (SELECT 1 FROM message_deliveries md WHERE md.message_pk = a.pk AND md.recipient = @actor::text))
), scored AS (
    SELECT f.voter, round(avg(f.b)::numeric, 9)::float8 AS score, count(*)::integer AS n
    FROM f GROUP BY f.voter
)
SELECT sc.voter, sc.score, sc.n
FROM scored sc
WHERE sqlc.narg(after_score)::float8 IS NULL
   OR sc.score > sqlc.narg(after_score)::float8
   OR (sc.score = sqlc.narg(after_score)::float8 AND sc.voter > @after_voter::text)
ORDER BY sc.score, sc.voter
LIMIT @lim::integer;
