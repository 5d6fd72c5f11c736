-- The result cache's call_ref held the tool's ref rather than a call's, and
-- nothing read it: drop it (0012 created it).
ALTER TABLE tool_result_cache DROP COLUMN IF EXISTS call_ref;
