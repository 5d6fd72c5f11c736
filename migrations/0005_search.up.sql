-- Lexical search: a tsvector per artifact (title weighted A, the text of content
-- weighted B), kept current by a trigger in the same transaction as every write,
-- so an artifact is findable the moment its write commits. Trigram matching on
-- titles serves short and misspelt terms.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- scidex_text is every string in a JSON document, one per line.
CREATE FUNCTION scidex_text(doc jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(string_agg(v #>> '{}', E'\n'), '')
    FROM jsonb_path_query(doc, 'strict $.** ? (@.type() == "string")') AS v
$$;

CREATE TABLE search_docs (
    artifact_pk bigint PRIMARY KEY REFERENCES artifacts (pk),
    doc         tsvector NOT NULL
);
CREATE INDEX search_docs_doc_idx ON search_docs USING gin (doc);

CREATE FUNCTION scidex_index_artifact() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_docs (artifact_pk, doc)
    VALUES (NEW.pk, setweight(to_tsvector('english', NEW.title), 'A') ||
                    setweight(to_tsvector('english', scidex_text(NEW.content)), 'B'))
    ON CONFLICT (artifact_pk) DO UPDATE SET doc = excluded.doc;
    RETURN NULL;
END
$$;

CREATE TRIGGER artifacts_index_search
AFTER INSERT OR UPDATE OF title, content ON artifacts
FOR EACH ROW EXECUTE FUNCTION scidex_index_artifact();

CREATE INDEX artifacts_title_trgm_idx ON artifacts USING gin (title gin_trgm_ops);

-- Artifacts written before this migration.
INSERT INTO search_docs (artifact_pk, doc)
SELECT pk, setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', scidex_text(content)), 'B')
FROM artifacts;
