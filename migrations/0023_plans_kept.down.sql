CREATE OR REPLACE FUNCTION event_horizon() RETURNS xid8
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
         WHERE (x::text::numeric % 4294967296)::bigint NOT IN (
             SELECT a.backend_xid::text::bigint FROM pg_stat_activity a
             WHERE a.backend_xid IS NOT NULL
               AND (a.datname IS DISTINCT FROM current_database() OR a.backend_type = 'autovacuum worker'))
           AND event_xact_may_write(x)),
        pg_snapshot_xmax(pg_current_snapshot()))
$$;

CREATE OR REPLACE FUNCTION scidex_text(doc jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(string_agg(v #>> '{}', E'\n'), '')
    FROM jsonb_path_query(doc, 'strict $.** ? (@.type() == "string")') AS v
$$;
