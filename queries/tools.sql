-- name: ToolFilePut :exec
-- Stores a bundle file's bytes; the same bytes again only touch it (see
-- ToolFilesCollect).
INSERT INTO tool_files (sha256, content, size) VALUES (@sha256, @content, @size)
ON CONFLICT (sha256) DO UPDATE SET touched_at = now();

-- name: ToolFileGet :one
SELECT content FROM tool_files WHERE sha256 = @sha256;

-- name: ToolFilesHave :many
-- Which of these hashes are stored; each is touched, since a registration
-- asks so that it can list the file without uploading it again.
UPDATE tool_files SET touched_at = now() WHERE sha256 = ANY(@hashes::text[]) RETURNING sha256;

-- name: ToolFilesCollect :execrows
-- Deletes the bundle files no version of any tool lists (current or past, any
-- lifecycle state) and not touched since @before.
DELETE FROM tool_files f
WHERE f.touched_at < @before
  AND NOT EXISTS (
    SELECT 1 FROM artifact_versions v JOIN artifacts a ON a.pk = v.artifact_pk
    WHERE a.type = 'tool' AND jsonb_typeof(v.content->'files') = 'array'
      AND v.content->'files' @> jsonb_build_array(jsonb_build_object('sha256', f.sha256)))
  AND NOT EXISTS (
    SELECT 1 FROM artifacts a
    WHERE a.type = 'tool' AND jsonb_typeof(a.content->'files') = 'array'
      AND a.content->'files' @> jsonb_build_array(jsonb_build_object('sha256', f.sha256)));

-- name: ToolCacheGet :one
-- An entry stored at or after @not_before (older ones have expired).
SELECT result FROM tool_result_cache
WHERE tool_ref = @tool_ref AND inputs_hash = @inputs_hash AND created_at >= @not_before;

-- name: ToolCachePut :exec
-- A put follows a miss: the entry is absent or expired, and is (re)written.
INSERT INTO tool_result_cache (tool_ref, inputs_hash, result) VALUES (@tool_ref, @inputs_hash, @result)
ON CONFLICT (tool_ref, inputs_hash) DO UPDATE SET result = EXCLUDED.result, created_at = now();

-- name: ToolCacheCollect :execrows
-- Deletes the entries stored before @before (expired).
DELETE FROM tool_result_cache WHERE created_at < @before;

-- name: ToolCacheCount :one
SELECT count(*) FROM tool_result_cache;

-- name: ToolUsageMany :many
-- What the ledger says of each named tool's calls: counts, median duration,
-- mean cost (NaN when there is nothing to take a median or mean of). One
-- statement for every tool of a page; a tool without calls has no row.
SELECT (content->>'tool_name')::text AS name,
       count(*)::int AS calls,
       (count(*) FILTER (WHERE content->>'status' = 'succeeded'))::int AS succeeded,
       (count(*) FILTER (WHERE content->>'status' = 'failed'))::int AS failed,
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY (content->>'duration_ms')::float8)
            FILTER (WHERE content ? 'duration_ms' AND content->>'status' IN ('succeeded', 'failed')), 'NaN')::float8 AS p50_duration_ms,
       coalesce(avg((content->>'cost_usd')::float8), 'NaN')::float8 AS mean_cost_usd
FROM artifacts
WHERE type = 'tool_call' AND content->>'tool_name' = ANY(@names::text[])
GROUP BY content->>'tool_name';

-- name: ToolWorkerBeat :exec
-- Registers a worker, or records that it is alive.
INSERT INTO tool_workers (id) VALUES (@id)
ON CONFLICT (id) DO UPDATE SET heartbeat_at = now();

-- name: ToolWorkerGone :exec
DELETE FROM tool_workers WHERE id = @id;

-- name: ToolWorkerAlive :one
-- Whether a worker beat within the last stale_after.
SELECT EXISTS (SELECT 1 FROM tool_workers WHERE id = @id AND heartbeat_at > now() - make_interval(secs => sqlc.arg(stale_secs)::float8));

-- name: ToolCallsLost :many
-- Running calls whose process has not beaten within stale_secs (or is gone):
-- it died mid-call, or stopped without finishing them. The status conditions
-- are artifacts_tool_call_live_idx's (0016), so only live calls are read.
SELECT a.id FROM artifacts a
WHERE a.type = 'tool_call' AND a.content->>'status' IN ('queued', 'running') AND a.content->>'status' = 'running'
  AND NOT EXISTS (SELECT 1 FROM tool_workers w WHERE w.id = a.content->>'worker' AND w.heartbeat_at > now() - make_interval(secs => sqlc.arg(stale_secs)::float8))
LIMIT 100;

-- name: ToolCallsExpired :many
-- Calls waiting on a work packet whose expires_at (a fixed-width UTC stamp,
-- so text order is time order) is at or before now: nobody did the work in
-- time. Read through artifacts_tool_call_live_idx (0016).
SELECT a.id FROM artifacts a
WHERE a.type = 'tool_call' AND a.content->>'status' IN ('queued', 'running') AND a.content->>'status' = 'queued'
  AND a.content->>'expires_at' <= @now::text
LIMIT 100;

-- name: ToolWorkersForget :exec
-- Drops the rows of workers long dead.
DELETE FROM tool_workers WHERE heartbeat_at < now() - interval '1 day';
