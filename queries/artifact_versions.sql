-- name: ArtifactVersionGetByHash :one
-- The newest version of an artifact with the given content hash (content can return
-- to an earlier state, so one hash may name several versions).
SELECT * FROM artifact_versions
WHERE artifact_pk = @artifact_pk AND content_hash = @content_hash
ORDER BY version DESC
LIMIT 1;

-- name: ArtifactVersionList :many
-- Versions of one artifact, newest first, before a version number.
SELECT * FROM artifact_versions
WHERE artifact_pk = @artifact_pk AND version < @before_version::integer
ORDER BY version DESC
LIMIT @lim::integer;

-- name: ArtifactVersionLatestInState :one
-- The newest version of an artifact in a lifecycle state: the version of a tool
-- that serves while a newer one waits for review.
SELECT * FROM artifact_versions
WHERE artifact_pk = @artifact_pk AND lifecycle_state = @state::text
ORDER BY version DESC
LIMIT 1;
