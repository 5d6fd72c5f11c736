-- The search index caps what it indexes. PostgreSQL refuses a tsvector of
-- 1 MiB or more ("string is too long for tsvector"), and the index is written
-- in the write's own transaction, so content with about 1 MiB of distinct words
-- failed its write as an internal error. Now the text of content is indexed in
-- chunks of 100,000 characters, each of which makes less than 1 MiB of tsvector
-- (at worst 6 bytes a character: a 4-byte character as a word of its own), and
-- chunks are added while the whole stays under 1,000,000 bytes. Ordinary prose
-- repeats its words, so a whole 1 MiB content (the content size limit) is
-- indexed; content of distinct words (identifiers, sequences) is indexed from
-- its start as far as the cap reaches, at least its first 100,000 characters.
-- Words beyond that are found by neither search mode, though the content is
-- stored and returned whole. PostgreSQL keeps no positions past 16,383, so
-- phrase matches and ranking use only the start of long content anyway.
-- scidex_search_doc is the index entry of a title and the text of a content
-- (scidex_text) of any length.
CREATE FUNCTION scidex_search_doc(title text, body text) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    chunk  constant int := 100000;
    budget constant int := 1000000;
    len    int := length(body);
    doc    tsvector := setweight(to_tsvector('english', title), 'A');
    part   tsvector;
    i      int := 1;
    n      int;
    space  int;
BEGIN
    WHILE i <= len LOOP
        n := chunk;
        IF i + n <= len THEN
            -- End the chunk at the next space, so no word is cut in two.
            space := strpos(substr(body, i + n, 256), ' ');
            IF space > 0 THEN
                n := n + space;
            END IF;
        END IF;
        part := setweight(to_tsvector('english', substr(body, i, n)), 'B');
        -- The merge is never larger than its two parts.
        EXIT WHEN pg_column_size(doc) + pg_column_size(part) > budget;
        doc := doc || part;
        i := i + n;
    END LOOP;
    RETURN doc;
END
$$;

-- Content text of one chunk or less, nearly every write, is indexed as before,
-- inline: a call to scidex_search_doc from the trigger costs a few microseconds
-- more per write.
CREATE OR REPLACE FUNCTION scidex_index_artifact() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    body text := scidex_text(NEW.content);
BEGIN
    INSERT INTO search_docs (artifact_pk, doc)
    VALUES (NEW.pk, CASE WHEN length(body) <= 100000
        THEN setweight(to_tsvector('english', NEW.title), 'A') || setweight(to_tsvector('english', body), 'B')
        ELSE scidex_search_doc(NEW.title, body) END)
    ON CONFLICT (artifact_pk) DO UPDATE SET doc = excluded.doc;
    RETURN NULL;
END
$$;
