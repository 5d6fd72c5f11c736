-- A LANGUAGE sql function whose body has a FROM or a sub-select is not inlined,
-- and PostgreSQL before 18 parses and plans such a body again on every call.
-- Two are called on every write:
--   - event_horizon (migrations 0007 and 0011), on every read of the log by the
--     hub, so once per event: 0.32 ms a call on an idle database and 1.0 ms
--     with 16 writers running, against 0.05 ms and 0.13 ms as PL/pgSQL;
--   - scidex_text (migration 0005), by the search index trigger on every
--     artifact written: 20 µs a call against 3 µs.
-- The same bodies in PL/pgSQL keep their plans for the session. Nothing else
-- changes: the volatility is the same, so event_horizon's queries still see
-- the calling statement's snapshot.
CREATE OR REPLACE FUNCTION event_horizon() RETURNS xid8
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN coalesce(
        (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
         WHERE (x::text::numeric % 4294967296)::bigint NOT IN (
             SELECT a.backend_xid::text::bigint FROM pg_stat_activity a
             WHERE a.backend_xid IS NOT NULL
               AND (a.datname IS DISTINCT FROM current_database() OR a.backend_type = 'autovacuum worker'))
           AND event_xact_may_write(x)),
        pg_snapshot_xmax(pg_current_snapshot()));
END
$$;

CREATE OR REPLACE FUNCTION scidex_text(doc jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (SELECT coalesce(string_agg(v #>> '{}', E'\n'), '')
            FROM jsonb_path_query(doc, 'strict $.** ? (@.type() == "string")') AS v);
END
$$;
