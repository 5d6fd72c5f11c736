-- name: ArtifactInsert :one
INSERT INTO artifacts (
    type, id, version, title, content, content_hash, lifecycle_state, schema_version,
    created_at, updated_at, created_by, updated_by, provenance
) VALUES (
    @type, @id, 1, @title, @content, @content_hash, @lifecycle_state, @schema_version,
    @now, @now, @actor_id, @actor_id, @provenance
)
ON CONFLICT ON CONSTRAINT artifacts_type_id_key DO NOTHING
RETURNING pk;

-- name: ArtifactGetByTypeID :one
SELECT * FROM artifacts WHERE type = @type AND id = @id;

-- name: ArtifactGetManyByTypeID :many
-- Loads many artifacts in one statement (the dataloader's batch).
SELECT * FROM artifacts
WHERE (type, id) IN (SELECT unnest(@types::text[]), unnest(@ids::text[]));

-- name: ArtifactGetForUpdate :one
-- Locks the artifact row for the rest of the transaction: the optimistic-lock
-- check and the write that follows it see the same current version.
SELECT * FROM artifacts WHERE type = @type AND id = @id FOR UPDATE;

-- name: ArtifactUpdate :exec
UPDATE artifacts
SET version = @version, title = @title, content = @content, content_hash = @content_hash,
    lifecycle_state = @lifecycle_state, schema_version = @schema_version,
    updated_at = @now, updated_by = @actor_id
WHERE pk = @pk;

-- name: ArtifactGetManyByPK :many
SELECT * FROM artifacts WHERE pk = ANY (@pks::bigint[]);

-- name: ArtifactExistMany :many
-- Which of many (type, id) pairs name an artifact.
SELECT type, id FROM artifacts
WHERE (type, id) IN (SELECT unnest(@types::text[]), unnest(@ids::text[]));

-- name: ArtifactSupersede :exec
UPDATE artifacts SET is_latest = false, superseded_by = @superseded_by WHERE pk = @pk;
