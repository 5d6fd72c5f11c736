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

-- name: ArtifactGetManyByPK :many
SELECT * FROM artifacts WHERE pk = ANY (@pks::bigint[]);

-- name: ArtifactExistMany :many
-- Which of many (type, id) pairs name an artifact, with what deciding who may
-- see it (a participants-only one exists only for its participants).
SELECT pk, type, id, visibility, created_by FROM artifacts
WHERE (type, id) IN (SELECT unnest(@types::text[]), unnest(@ids::text[]));

-- name: ArtifactListStaleSchema :many
-- A page of the ids of a type's artifacts stored below a schema version, in
-- id order after a cursor (scidex schema upgrade; the (type, id) key).
SELECT id, schema_version FROM artifacts
WHERE type = @type AND id > @after AND schema_version < @below
ORDER BY id LIMIT @n;

-- name: ArtifactRestampSchemaVersion :execrows
-- Says that an artifact's latest content, unchanged by the migrations from
-- its stored schema version, is stored at a newer one (valid there, checked
-- by the caller): the row and its latest version's, only while the content
-- is the one checked.
WITH a AS (
    UPDATE artifacts SET schema_version = @version
    WHERE artifacts.type = @type AND artifacts.id = @id AND artifacts.content_hash = @content_hash
      AND artifacts.schema_version < @version
    RETURNING artifacts.pk, artifacts.version
)
UPDATE artifact_versions v SET schema_version = @version
FROM a WHERE v.artifact_pk = a.pk AND v.version = a.version;

-- name: ArtifactSupersede :exec
UPDATE artifacts SET is_latest = false, superseded_by = @superseded_by WHERE pk = @pk;

-- name: ArtifactCreateWrite :one
-- Everything a create writes, in one statement: the idempotency claim (when the
-- write has a key; it stores the result up front), the artifact, its journal
-- row, its first version, its event and the NOTIFY of the event id. One row
-- always comes back: claimed is false when another request holds the key (then
-- nothing was written), pk is null when the (type, id) pair is taken. A claimed
-- key whose artifact could not be written aborts the statement (scidex_assert),
-- so the claim never outlives a failed write.
WITH k AS (
    INSERT INTO idempotency_keys (actor_id, key, operation, request_hash, result, created_at, expires_at)
    SELECT @actor_id::text, @idem_key::text, @operation::text, @request_hash::text, @result::jsonb, @now::timestamptz, @expires_at::timestamptz
    WHERE @idem_key::text <> ''
    ON CONFLICT (actor_id, key) DO UPDATE
    SET operation = excluded.operation, request_hash = excluded.request_hash, result = excluded.result,
        created_at = excluded.created_at, expires_at = excluded.expires_at
    WHERE idempotency_keys.expires_at < excluded.created_at
    RETURNING 1 AS claimed
), go AS (
    SELECT 1 AS ok WHERE @idem_key::text = '' OR EXISTS (SELECT 1 FROM k)
), a AS (
    INSERT INTO artifacts (
        type, id, version, title, content, content_hash, lifecycle_state, schema_version,
        created_at, updated_at, created_by, updated_by, provenance, visibility, participants
    )
    SELECT @type::text, @id::text, 1, @title::text, @content::jsonb, @content_hash::text, sqlc.narg(lifecycle_state)::text, @schema_version::integer,
        @now::timestamptz, @now::timestamptz, @actor_id::text, @actor_id::text, @provenance::jsonb, @visibility::text, @participants::text[]
    FROM go
    ON CONFLICT ON CONSTRAINT artifacts_type_id_key DO NOTHING
    RETURNING pk, xmin::text AS xmin
), j AS (
    INSERT INTO write_journal (
        occurred_at, request_id, operation, ref, actor_id, actor_kind, permissions,
        session_id, parent_session_id, delegation_chain, idempotency_key, task_id, delegation
    )
    SELECT @now::timestamptz, @request_id::text, @operation::text, @ref::text, @actor_id::text, @actor_kind::text, @permissions::text[],
        sqlc.narg(session_id)::text, sqlc.narg(parent_session_id)::text, @delegation_chain::text[], nullif(@idem_key::text, ''),
        sqlc.narg(task_id)::text, @delegation::jsonb
    FROM a
    RETURNING id
), v AS (
    INSERT INTO artifact_versions (
        artifact_pk, version, content_hash, title, content, lifecycle_state, schema_version,
        created_at, created_by, journal_id
    )
    SELECT a.pk, 1, @content_hash::text, @title::text, @content::jsonb, sqlc.narg(lifecycle_state)::text, @schema_version::integer,
        @now::timestamptz, @actor_id::text, j.id
    FROM a, j
), e AS (
    INSERT INTO events (event_type, occurred_at, source, actor_id, actor_kind, ref, payload, schema_version, audience)
    SELECT @event_type::text, @now::timestamptz, @source::text, @actor_id::text, @actor_kind::text, @ref::text, @payload::jsonb, 1, @audience::text[]
    FROM a
    RETURNING id
), n AS (
    SELECT e.id FROM e CROSS JOIN LATERAL (SELECT pg_notify(@channel::text, e.id::text)) AS notify
)
SELECT
    EXISTS (SELECT 1 FROM go) AS claimed,
    coalesce((SELECT pk FROM a), 0)::bigint AS pk,
    coalesce((SELECT xmin FROM a), '')::text AS xmin,
    coalesce((SELECT id FROM n), 0)::bigint AS event_id,
    scidex_assert(NOT EXISTS (SELECT 1 FROM k) OR EXISTS (SELECT 1 FROM a), 'scidex: id taken') AS consistent;

-- name: ArtifactUpdateWrite :one
-- Everything an update writes, in one statement, if the artifact is still at the
-- base the writer read, still latest, and its envelope still as the writer
-- checked it (version, stored schema version, visibility, participants, and
-- for a row remembered from a write, the tuple that write made: xmin; see
-- internal/store/current.go): the idempotency claim (with a key), the new
-- current row, its journal row, the version, the event and the NOTIFY. One row
-- always comes back: claimed is false when another request holds the key,
-- version is 0 when the row is no longer as read (nothing was written). A
-- claimed key whose update could not happen aborts the statement.
WITH k AS (
    INSERT INTO idempotency_keys (actor_id, key, operation, request_hash, result, created_at, expires_at)
    SELECT @actor_id::text, @idem_key::text, @operation::text, @request_hash::text, @result::jsonb, @now::timestamptz, @expires_at::timestamptz
    WHERE @idem_key::text <> ''
    ON CONFLICT (actor_id, key) DO UPDATE
    SET operation = excluded.operation, request_hash = excluded.request_hash, result = excluded.result,
        created_at = excluded.created_at, expires_at = excluded.expires_at
    WHERE idempotency_keys.expires_at < excluded.created_at
    RETURNING 1 AS claimed
), go AS (
    SELECT 1 AS ok WHERE @idem_key::text = '' OR EXISTS (SELECT 1 FROM k)
), u AS (
    UPDATE artifacts
    SET version = artifacts.version + 1, title = @title::text, content = @content::jsonb, content_hash = @content_hash::text,
        lifecycle_state = sqlc.narg(lifecycle_state)::text, schema_version = @schema_version::integer,
        updated_at = @now::timestamptz, updated_by = @actor_id::text
    FROM go
    WHERE artifacts.pk = @pk::bigint AND artifacts.content_hash = @base_content_hash::text AND artifacts.is_latest
      AND artifacts.version = @base_version::integer AND artifacts.schema_version = @base_schema_version::integer
      AND artifacts.visibility = @base_visibility::text AND artifacts.participants = @base_participants::text[]
      AND (@base_xmin::text = '' OR artifacts.xmin::text = @base_xmin::text)
    RETURNING artifacts.pk, artifacts.version, artifacts.xmin::text AS xmin
), j AS (
    INSERT INTO write_journal (
        occurred_at, request_id, operation, ref, actor_id, actor_kind, permissions,
        session_id, parent_session_id, delegation_chain, idempotency_key, task_id, delegation
    )
    SELECT @now::timestamptz, @request_id::text, @operation::text, @ref::text, @actor_id::text, @actor_kind::text, @permissions::text[],
        sqlc.narg(session_id)::text, sqlc.narg(parent_session_id)::text, @delegation_chain::text[], nullif(@idem_key::text, ''),
        sqlc.narg(task_id)::text, @delegation::jsonb
    FROM u
    RETURNING id
), v AS (
    INSERT INTO artifact_versions (
        artifact_pk, version, content_hash, title, content, lifecycle_state, schema_version,
        created_at, created_by, journal_id
    )
    SELECT u.pk, u.version, @content_hash::text, @title::text, @content::jsonb, sqlc.narg(lifecycle_state)::text, @schema_version::integer,
        @now::timestamptz, @actor_id::text, j.id
    FROM u, j
), e AS (
    INSERT INTO events (event_type, occurred_at, source, actor_id, actor_kind, ref, payload, schema_version, audience)
    SELECT @event_type::text, @now::timestamptz, @source::text, @actor_id::text, @actor_kind::text, @ref::text,
        @payload::jsonb || jsonb_build_object('version', u.version), 1, @audience::text[]
    FROM u
    RETURNING id
), n AS (
    SELECT e.id FROM e CROSS JOIN LATERAL (SELECT pg_notify(@channel::text, e.id::text)) AS notify
)
SELECT
    EXISTS (SELECT 1 FROM go) AS claimed,
    coalesce((SELECT version FROM u), 0)::integer AS version,
    coalesce((SELECT xmin FROM u), '')::text AS xmin,
    coalesce((SELECT id FROM n), 0)::bigint AS event_id,
    scidex_assert(NOT EXISTS (SELECT 1 FROM k) OR EXISTS (SELECT 1 FROM u), 'scidex: base changed') AS consistent;

-- name: ArtifactRestampVisibility :execrows
-- A new schema version changed its type's policy.read: every artifact of the
-- type takes the new visibility, in the registering transaction; but an artifact
-- made private for itself (participants: a tool call, what was derived from a
-- private input) never becomes public with its type.
UPDATE artifacts SET visibility = @visibility::text
WHERE type = @type::text AND visibility <> @visibility::text
  AND (@visibility::text = 'participants' OR cardinality(participants) = 0);

-- name: ArtifactMakePrivate :exec
-- Makes an artifact participants-only with these participants (its creator
-- reads it anyway), and narrows the events this transaction wrote about it to
-- the same audience: an artifact derived from a private input, in the
-- transaction that links it. Events of earlier transactions stay as they were.
WITH a AS (
    UPDATE artifacts SET visibility = 'participants', participants = @participants::text[]
    WHERE pk = @pk
    RETURNING type || ':' || id AS ref
)
UPDATE events e SET audience = @audience::text[]
FROM a
WHERE e.xid = pg_current_xact_id() AND split_part(e.ref, '@', 1) = a.ref;
