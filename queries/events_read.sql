-- name: EventListAfter :many
-- Events after a cursor in delivery order (xid, id), with the horizon: the oldest
-- transaction of this database still running (event_horizon, migration 0007).
-- Only events whose xid is below the horizon may be handed out: an older
-- transaction still running could yet commit an event that sorts before them.
-- Visibility is applied here: public events, events whose audience names the
-- actor, and everything for admins (system.* only for them).
WITH h AS MATERIALIZED (SELECT event_horizon() AS x)
SELECT e.id, e.xid::text AS xid, e.event_type, e.occurred_at, e.source, e.actor_id, e.actor_kind, e.ref, e.payload,
       e.schema_version, e.audience, h.x::text AS horizon
FROM events e, h
WHERE (e.xid, e.id) > (@after_xid::xid8, @after_id::bigint)
  AND (@admin::boolean OR (
        e.event_type NOT LIKE 'system.%'
        AND (cardinality(e.audience) = 0 OR @actor_id::text = ANY (e.audience))))
ORDER BY e.xid, e.id
LIMIT @lim::integer;

-- name: EventTail :one
-- The cursor of the newest event that may be handed out now.
WITH h AS MATERIALIZED (SELECT event_horizon() AS x),
     t AS (SELECT e.xid, e.id FROM events e, h WHERE e.xid < h.x ORDER BY e.xid DESC, e.id DESC LIMIT 1)
SELECT coalesce((SELECT t.xid FROM t), '0'::xid8)::text AS xid,
       coalesce((SELECT t.id FROM t), 0)::bigint AS id;
