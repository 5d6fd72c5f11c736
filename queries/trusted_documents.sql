-- name: TrustedDocumentInsert :one
-- Registers a document; a document registered before keeps its first name
-- and source (inserted is then false).
INSERT INTO trusted_documents (hash, document, name, source, registered_at)
VALUES (@hash, @document, @name, @source, @registered_at)
ON CONFLICT (hash) DO UPDATE SET hash = EXCLUDED.hash
RETURNING (xmax = 0)::boolean AS inserted;

-- name: TrustedDocumentGet :one
SELECT document FROM trusted_documents WHERE hash = @hash;

-- name: TrustedDocumentList :many
SELECT hash, name, source, registered_at, length(document)::int AS bytes FROM trusted_documents ORDER BY registered_at, hash;
