DROP INDEX IF EXISTS tool_files_touched_idx;
ALTER TABLE tool_files DROP COLUMN IF EXISTS touched_at;
DROP INDEX IF EXISTS tool_result_cache_created_idx;
