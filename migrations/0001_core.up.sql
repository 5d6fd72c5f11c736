-- The core of the substrate: actors, the schema registry, artifacts with every
-- version kept, the write journal, idempotency keys and the event log.

-- Every actor that has written something. Upserted by the write path so that
-- createdBy resolves to a kind and permissions without asking the identity provider.
CREATE TABLE actors (
    id            text PRIMARY KEY,
    kind          text NOT NULL,
    permissions   text[] NOT NULL DEFAULT '{}',
    handle        text UNIQUE,
    first_seen_at timestamptz NOT NULL,
    last_seen_at  timestamptz NOT NULL
);

-- The schema registry: every version of every type's schema document.
CREATE TABLE schemas (
    type         text NOT NULL,
    version      integer NOT NULL CHECK (version > 0),
    document     jsonb NOT NULL,
    content_hash text NOT NULL,
    created_at   timestamptz NOT NULL,
    created_by   text NOT NULL,
    PRIMARY KEY (type, version)
);

-- One row per artifact: its latest version, denormalised for reads.
CREATE TABLE artifacts (
    pk              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    type            text NOT NULL,
    id              text NOT NULL,
    version         integer NOT NULL,
    title           text NOT NULL,
    content         jsonb NOT NULL,
    content_hash    text NOT NULL,
    lifecycle_state text,
    schema_version  integer NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    created_by      text NOT NULL REFERENCES actors (id),
    updated_by      text NOT NULL REFERENCES actors (id),
    is_latest       boolean NOT NULL DEFAULT true,
    superseded_by   text,
    quality_score   double precision,
    provenance      jsonb NOT NULL DEFAULT '[]',
    CONSTRAINT artifacts_type_id_key UNIQUE (type, id),
    CONSTRAINT artifacts_content_is_object CHECK (jsonb_typeof(content) = 'object')
);
CREATE INDEX artifacts_type_created_idx ON artifacts (type, created_at, pk);
CREATE INDEX artifacts_type_updated_idx ON artifacts (type, updated_at, pk);
CREATE INDEX artifacts_created_by_idx ON artifacts (created_by);
CREATE INDEX artifacts_content_idx ON artifacts USING gin (content jsonb_path_ops);

-- Every version of every artifact, so history, diff and pinned refs always work.
CREATE TABLE artifact_versions (
    artifact_pk     bigint NOT NULL REFERENCES artifacts (pk),
    version         integer NOT NULL,
    content_hash    text NOT NULL,
    title           text NOT NULL,
    content         jsonb NOT NULL,
    lifecycle_state text,
    schema_version  integer NOT NULL,
    created_at      timestamptz NOT NULL,
    created_by      text NOT NULL REFERENCES actors (id),
    journal_id      bigint NOT NULL,
    PRIMARY KEY (artifact_pk, version)
);
CREATE INDEX artifact_versions_hash_idx ON artifact_versions (artifact_pk, content_hash);

-- The write journal: who did what, on whose behalf, in which request.
CREATE TABLE write_journal (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    occurred_at       timestamptz NOT NULL,
    request_id        text NOT NULL,
    operation         text NOT NULL,
    ref               text NOT NULL,
    actor_id          text NOT NULL,
    actor_kind        text NOT NULL,
    permissions       text[] NOT NULL,
    session_id        text,
    parent_session_id text,
    delegation_chain  text[] NOT NULL DEFAULT '{}',
    idempotency_key   text
);
CREATE INDEX write_journal_ref_idx ON write_journal (ref);

-- Idempotency: (actor, key) -> the stored result of the first request.
CREATE TABLE idempotency_keys (
    actor_id     text NOT NULL,
    key          text NOT NULL,
    operation    text NOT NULL,
    request_hash text NOT NULL,
    result       jsonb NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (actor_id, key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

-- The event log. Each row is written in the same transaction as the change it
-- reports; xid lets readers hand out only rows whose transaction is older than
-- every transaction still running, so nothing committed late is ever skipped.
CREATE TABLE events (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    xid            xid8 NOT NULL DEFAULT pg_current_xact_id(),
    event_type     text NOT NULL,
    occurred_at    timestamptz NOT NULL,
    source         text NOT NULL,
    actor_id       text NOT NULL,
    actor_kind     text NOT NULL,
    ref            text,
    payload        jsonb NOT NULL DEFAULT '{}',
    schema_version integer NOT NULL DEFAULT 1,
    audience       text[] NOT NULL DEFAULT '{}'
);
CREATE INDEX events_xid_id_idx ON events (xid, id);
