-- artifact_briefs is every artifact without its content: a read that needs
-- only the envelope (a page's link targets asked for their titles, types and
-- signals) does not make PostgreSQL send, nor the server copy, content of up
-- to 1 MiB per row. Its columns are the artifacts table's, in order, so that
-- the row type sqlc generates for it converts to dbsqlc.Artifact: a column
-- added to artifacts and not here stops the build (internal/store/batchread.go).
CREATE VIEW artifact_briefs AS
SELECT pk, type, id, version, title, NULL::jsonb AS content, content_hash, lifecycle_state, schema_version,
       created_at, updated_at, created_by, updated_by, is_latest, superseded_by, quality_score, provenance,
       visibility, participants
FROM artifacts;
