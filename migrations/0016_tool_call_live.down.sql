DROP INDEX IF EXISTS artifacts_tool_call_live_idx;
