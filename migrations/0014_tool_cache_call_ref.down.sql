ALTER TABLE tool_result_cache ADD COLUMN IF NOT EXISTS call_ref text NOT NULL DEFAULT '';
