CREATE OR REPLACE FUNCTION scidex_index_artifact() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_docs (artifact_pk, doc)
    VALUES (NEW.pk, setweight(to_tsvector('english', NEW.title), 'A') ||
                    setweight(to_tsvector('english', scidex_text(NEW.content)), 'B'))
    ON CONFLICT (artifact_pk) DO UPDATE SET doc = excluded.doc;
    RETURN NULL;
END
$$;

DROP FUNCTION scidex_search_doc(text, text);
