DROP TABLE IF EXISTS view_scores;
DROP TABLE IF EXISTS view_cache;
DROP INDEX IF EXISTS signals_kind_idx;
ALTER TABLE signals DROP COLUMN IF EXISTS opponent_pk;
