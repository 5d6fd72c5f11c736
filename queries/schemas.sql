-- name: SchemaInsert :execrows
INSERT INTO schemas (type, version, document, content_hash, created_at, created_by)
VALUES (@type, @version, @document, @content_hash, @created_at, @created_by)
ON CONFLICT (type, version) DO NOTHING;

-- name: SchemaListLatest :many
SELECT DISTINCT ON (type) * FROM schemas ORDER BY type, version DESC;

-- name: SchemaGet :one
SELECT * FROM schemas WHERE type = @type AND version = @version;

-- name: SchemaLatestVersion :one
SELECT coalesce(max(version), 0)::integer FROM schemas WHERE type = @type;
