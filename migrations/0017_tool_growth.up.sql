-- Bounded growth of the tool plane's side tables.
--
-- tool_result_cache entries expire (the operator's --tool-cache-ttl): a read
-- ignores older ones and a sweep deletes them, in created_at order.
CREATE INDEX tool_result_cache_created_idx ON tool_result_cache (created_at);

-- A bundle file no tool version lists any more is collected, once it has not
-- been stored or asked for (touched) within a grace period: a registration in
-- flight has touched the files it is about to list.
ALTER TABLE tool_files ADD COLUMN touched_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX tool_files_touched_idx ON tool_files (touched_at);
