-- event_horizon is the oldest transaction of this database still running, or
-- the next one to start when none is: an event whose xid is below it may be
-- handed out, since no transaction that could still commit an event sorts
-- before it. pg_snapshot_xmin(pg_current_snapshot()) would do, but it counts
-- the running transactions of every database of the cluster: a long one in
-- another database (a dump, a neighbour's batch job) would hold back this
-- database's events for as long as it runs, and so would autovacuum's ANALYZE
-- here. A running transaction is left out only when pg_stat_activity places
-- it in another database or in an autovacuum worker (xids are unique, so that
-- cannot be wrong); one it cannot place (no permission to see it, a prepared
-- transaction) still counts. Both calls of pg_current_snapshot() see
-- the calling statement's snapshot.
CREATE FUNCTION event_horizon() RETURNS xid8
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
         WHERE (x::text::numeric % 4294967296)::bigint NOT IN (
             SELECT a.backend_xid::text::bigint FROM pg_stat_activity a
             WHERE a.backend_xid IS NOT NULL
               AND (a.datname IS DISTINCT FROM current_database() OR a.backend_type = 'autovacuum worker'))),
        pg_snapshot_xmax(pg_current_snapshot()))
$$;
