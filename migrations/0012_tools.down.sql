DROP TABLE IF EXISTS tool_workers;
DROP INDEX IF EXISTS artifacts_tool_call_name_idx;
DROP TABLE IF EXISTS tool_result_cache;
DROP TABLE IF EXISTS tool_files;
