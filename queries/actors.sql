-- name: ActorUpsert :exec
-- Records the actor of a write. The row is only rewritten when what we know of the
-- actor changed, so the common case costs an index probe and no dead tuple.
INSERT INTO actors (id, kind, permissions, first_seen_at, last_seen_at)
VALUES (@id, @kind, @permissions, @seen_at, @seen_at)
ON CONFLICT (id) DO UPDATE
SET kind = excluded.kind, permissions = excluded.permissions, last_seen_at = excluded.last_seen_at
WHERE actors.kind IS DISTINCT FROM excluded.kind
   OR actors.permissions IS DISTINCT FROM excluded.permissions;

-- name: ActorGetMany :many
SELECT id, kind, permissions, handle FROM actors WHERE id = ANY(@ids::text[]);

-- name: ActorResolveHandle :one
-- The actor a @handle names: by handle, else by id.
SELECT id FROM actors WHERE handle = sqlc.arg(handle)::text OR id = sqlc.arg(handle)::text
ORDER BY (handle = sqlc.arg(handle)::text) DESC NULLS LAST LIMIT 1;
