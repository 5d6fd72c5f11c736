-- A transaction can end between the moment a statement takes its snapshot and
-- the moment event_horizon reads pg_stat_activity. One of another database that
-- did is no longer placed there, and event_horizon (migration 0007) counted it:
-- for that one call the horizon fell below every later event, a poll came back
-- short and the hub waited to try again. With many writers in other databases
-- of the cluster (the test suite's packages, a neighbour's application) that
-- happened often enough for a client to notice.
--
-- Such a transaction now counts only when it may have written events here: in a
-- fresh snapshot it is still running, or it has committed and its events are
-- there. A VOLATILE function obtains a fresh snapshot for each query it runs
-- (under READ COMMITTED), and one query asks both questions of the same
-- snapshot, so a transaction that commits meanwhile is either still running in
-- it or visible with all its events. One that aborted, or wrote no events
-- here, cannot have an event the calling statement would pass. Under
-- REPEATABLE READ or SERIALIZABLE there is no fresh snapshot to be had, so a
-- finished transaction still counts, as before.
CREATE FUNCTION event_xact_may_write(x xid8) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RETURN true;
    END IF;
    RETURN (SELECT x IN (SELECT pg_snapshot_xip(q.s))
                OR (pg_visible_in_snapshot(x, q.s) AND EXISTS (SELECT 1 FROM events e WHERE e.xid = x))
            FROM (SELECT pg_current_snapshot() AS s) q);
END
$$;

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
