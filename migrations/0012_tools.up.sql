-- Tools (issue 9): the bytes of tool bundles, and the opt-in result cache of
-- deterministic tools.

-- A tool bundle's files, by content: a tool version's manifest lists
-- {path, sha256}; the bytes live here once however many versions share them.
CREATE TABLE tool_files (
    sha256     text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    content    bytea NOT NULL,
    size       bigint NOT NULL CHECK (size = octet_length(content)),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Results of deterministic tools, by tool version and canonical args hash. Only
-- written when the operator enabled the cache and the call succeeded with no
-- output violation; a hit is still a recorded call (tool_call.cached).
CREATE TABLE tool_result_cache (
    tool_ref    text NOT NULL,
    inputs_hash text NOT NULL,
    result      jsonb NOT NULL,
    call_ref    text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tool_ref, inputs_hash)
);

-- A tool's usage is read from its calls: find them by tool name.
CREATE INDEX artifacts_tool_call_name_idx ON artifacts ((content->>'tool_name')) WHERE type = 'tool_call';

-- The processes working queued tool calls, with a heartbeat: a running call
-- names its worker, and a call whose worker stopped beating is recovered (run
-- again or failed) in seconds rather than when the queue's rescuer notices.
CREATE TABLE tool_workers (
    id           text PRIMARY KEY,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);
