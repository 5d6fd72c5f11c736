-- name: ToolFilePut :exec
-- Stores a bundle file's bytes; the same bytes again change nothing.
INSERT INTO tool_files (sha256, content, size) VALUES (@sha256, @content, @size)
ON CONFLICT (sha256) DO NOTHING;

-- name: ToolFileGet :one
SELECT content FROM tool_files WHERE sha256 = @sha256;

-- name: ToolFilesHave :many
-- Which of these hashes are stored.
SELECT sha256 FROM tool_files WHERE sha256 = ANY(@hashes::text[]);

-- name: ToolCacheGet :one
SELECT result, call_ref FROM tool_result_cache WHERE tool_ref = @tool_ref AND inputs_hash = @inputs_hash;

-- name: ToolCachePut :exec
INSERT INTO tool_result_cache (tool_ref, inputs_hash, result, call_ref) VALUES (@tool_ref, @inputs_hash, @result, @call_ref)
ON CONFLICT (tool_ref, inputs_hash) DO NOTHING;

-- name: ToolCacheCount :one
SELECT count(*) FROM tool_result_cache;

-- name: ToolUsage :one
-- What the ledger says of a tool's calls: counts, median duration, mean cost
-- (NaN when there is nothing to take a median or mean of).
SELECT count(*)::int AS calls,
       (count(*) FILTER (WHERE content->>'status' = 'succeeded'))::int AS succeeded,
       (count(*) FILTER (WHERE content->>'status' = 'failed'))::int AS failed,
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY (content->>'duration_ms')::float8)
            FILTER (WHERE content ? 'duration_ms' AND content->>'status' IN ('succeeded', 'failed')), 'NaN')::float8 AS p50_duration_ms,
       coalesce(avg((content->>'cost_usd')::float8), 'NaN')::float8 AS mean_cost_usd
FROM artifacts
WHERE type = 'tool_call' AND content->>'tool_name' = @name::text;
