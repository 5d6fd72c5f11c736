DROP INDEX artifacts_title_trgm_idx;
DROP TRIGGER artifacts_index_search ON artifacts;
DROP FUNCTION scidex_index_artifact();
DROP TABLE search_docs;
DROP FUNCTION scidex_text(jsonb);
