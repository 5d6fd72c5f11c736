-- name: AliasLock :exec
-- Serialises the handle registry's writes (claims and renames): a transaction
-- lock, so the look-alike check and the write see the same registry.
SELECT pg_advisory_xact_lock(7363696465786131);

-- name: AliasBySkeleton :many
-- The entries that look like a handle.
SELECT id, content FROM artifacts WHERE type = 'alias' AND content->>'skeleton' = @skeleton::text ORDER BY id;

-- name: AliasActiveOfActor :many
-- An actor's active persona handles.
SELECT id FROM artifacts
WHERE type = 'alias' AND content->>'actor' = @actor::text AND content->>'kind' = 'persona' AND content->>'state' = 'active'
ORDER BY id;

-- name: ActorSetHandle :exec
-- Records an actor's current handle (Actor.handle). A handle never passes to
-- another actor (a tombstone stays its actor's), so no other row holds it.
UPDATE actors SET handle = @handle::text WHERE id = @id;

-- name: ActorExists :one
SELECT EXISTS (SELECT 1 FROM actors WHERE id = @id);

-- name: ActorIDs :many
-- Every actor but the server's own: the recipients of an actors:* broadcast.
SELECT id FROM actors WHERE kind <> 'system' ORDER BY id;
