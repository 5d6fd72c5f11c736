-- name: LinkInsert :one
INSERT INTO links (from_pk, predicate, to_pk, to_hash, evidence, created_by, created_at, metadata)
VALUES (@from_pk, @predicate, @to_pk, @to_hash, @evidence, @created_by, @created_at, @metadata)
ON CONFLICT ON CONSTRAINT links_edge_key DO NOTHING
RETURNING pk;

-- name: LinkListOut :many
-- The first links out of each of many artifacts, one statement for the batch.
SELECT src.pk::bigint AS source_pk, l.*
FROM unnest(@pks::bigint[]) AS src (pk)
CROSS JOIN LATERAL (
    SELECT * FROM links
    WHERE links.from_pk = src.pk
      AND (cardinality(@predicates::text[]) = 0 OR links.predicate = ANY (@predicates::text[]))
      AND links.pk > @after_pk::bigint
    ORDER BY links.pk
    LIMIT @lim::integer
) l;

-- name: LinkListIn :many
-- The first links into each of many artifacts.
SELECT src.pk::bigint AS source_pk, l.*
FROM unnest(@pks::bigint[]) AS src (pk)
CROSS JOIN LATERAL (
    SELECT * FROM links
    WHERE links.to_pk = src.pk
      AND (cardinality(@predicates::text[]) = 0 OR links.predicate = ANY (@predicates::text[]))
      AND links.pk > @after_pk::bigint
    ORDER BY links.pk
    LIMIT @lim::integer
) l;

-- name: LinkListBoth :many
-- The first links into or out of each of many artifacts.
SELECT src.pk::bigint AS source_pk, l.*
FROM unnest(@pks::bigint[]) AS src (pk)
CROSS JOIN LATERAL (
    SELECT * FROM links
    WHERE (links.from_pk = src.pk OR links.to_pk = src.pk)
      AND (cardinality(@predicates::text[]) = 0 OR links.predicate = ANY (@predicates::text[]))
      AND links.pk > @after_pk::bigint
    ORDER BY links.pk
    LIMIT @lim::integer
) l;

-- name: LinkGetByEdge :one
SELECT * FROM links WHERE from_pk = @from_pk AND predicate = @predicate AND to_pk = @to_pk;

-- name: LinkGetByPK :one
SELECT * FROM links WHERE pk = @pk;
