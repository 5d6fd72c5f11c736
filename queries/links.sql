-- name: LinkInsert :one
INSERT INTO links (from_pk, predicate, to_pk, to_hash, evidence, created_by, created_at, metadata)
VALUES (@from_pk, @predicate, @to_pk, @to_hash, @evidence, @created_by, @created_at, @metadata)
ON CONFLICT ON CONSTRAINT links_edge_key DO NOTHING
RETURNING pk;

-- name: LinkListOut :many
-- The first links out of each of many artifacts, each with its target, in one
-- statement for the whole batch.
SELECT src.pk::bigint AS source_pk, sqlc.embed(links), sqlc.embed(artifacts)
FROM unnest(@pks::bigint[]) AS src (pk)
CROSS JOIN LATERAL (
    SELECT x.pk FROM links AS x
    WHERE x.from_pk = src.pk
      AND (cardinality(@predicates::text[]) = 0 OR x.predicate = ANY (@predicates::text[]))
      AND x.pk > @after_pk::bigint
    ORDER BY x.pk
    LIMIT @lim::integer
) AS page
JOIN links ON links.pk = page.pk
JOIN artifacts ON artifacts.pk = links.to_pk
ORDER BY src.pk, links.pk;

-- name: LinkListOutBrief :many
-- LinkListOut with each target's envelope only (artifact_briefs: no content),
-- for a selection of the targets that reads no content.
SELECT src.pk::bigint AS source_pk, sqlc.embed(links), sqlc.embed(artifact_briefs)
FROM unnest(@pks::bigint[]) AS src (pk)
CROSS JOIN LATERAL (
    SELECT x.pk FROM links AS x
    WHERE x.from_pk = src.pk
      AND (cardinality(@predicates::text[]) = 0 OR x.predicate = ANY (@predicates::text[]))
      AND x.pk > @after_pk::bigint
    ORDER BY x.pk
    LIMIT @lim::integer
) AS page
JOIN links ON links.pk = page.pk
JOIN artifact_briefs ON artifact_briefs.pk = links.to_pk
ORDER BY src.pk, links.pk;

-- name: LinkListIn :many
-- The first links into each of many artifacts, each with its source.
SELECT src.pk::bigint AS source_pk, sqlc.embed(links), sqlc.embed(artifacts)
FROM unnest(@pks::bigint[]) AS src (pk)
CROSS JOIN LATERAL (
    SELECT x.pk FROM links AS x
    WHERE x.to_pk = src.pk
      AND (cardinality(@predicates::text[]) = 0 OR x.predicate = ANY (@predicates::text[]))
      AND x.pk > @after_pk::bigint
    ORDER BY x.pk
    LIMIT @lim::integer
) AS page
JOIN links ON links.pk = page.pk
JOIN artifacts ON artifacts.pk = links.from_pk
ORDER BY src.pk, links.pk;

-- name: LinkListBoth :many
-- The first links into or out of each of many artifacts, each with its other end.
SELECT src.pk::bigint AS source_pk, sqlc.embed(links), sqlc.embed(artifacts)
FROM unnest(@pks::bigint[]) AS src (pk)
CROSS JOIN LATERAL (
    SELECT x.pk FROM links AS x
    WHERE (x.from_pk = src.pk OR x.to_pk = src.pk)
      AND (cardinality(@predicates::text[]) = 0 OR x.predicate = ANY (@predicates::text[]))
      AND x.pk > @after_pk::bigint
    ORDER BY x.pk
    LIMIT @lim::integer
) AS page
JOIN links ON links.pk = page.pk
JOIN artifacts ON artifacts.pk = CASE WHEN links.from_pk = src.pk THEN links.to_pk ELSE links.from_pk END
ORDER BY src.pk, links.pk;

-- name: LinkGetByEdge :one
SELECT * FROM links WHERE from_pk = @from_pk AND predicate = @predicate AND to_pk = @to_pk;

-- name: LinkGetByPK :one
SELECT * FROM links WHERE pk = @pk;
