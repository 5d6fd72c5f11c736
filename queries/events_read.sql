-- name: EventListAfter :many
-- Events after a cursor in delivery order (xid, id), with the horizon: the oldest
-- transaction id still running. Only events whose xid is below the horizon may be
-- handed out: an older transaction still running could yet commit an event that
-- sorts before them. Visibility is applied here: public events, events whose
-- audience names the actor, and everything for admins (system.* only for them).
SELECT e.id, e.xid::text AS xid, e.event_type, e.occurred_at, e.source, e.actor_id, e.actor_kind, e.ref, e.payload,
       e.schema_version, e.audience, pg_snapshot_xmin(pg_current_snapshot())::text AS horizon
FROM events e
WHERE (e.xid, e.id) > (@after_xid::xid8, @after_id::bigint)
  AND (@admin::boolean OR (
        e.event_type NOT LIKE 'system.%'
        AND (cardinality(e.audience) = 0 OR @actor_id::text = ANY (e.audience))))
ORDER BY e.xid, e.id
LIMIT @lim::integer;

-- name: EventTail :one
-- The cursor of the newest event that may be handed out now, and the horizon.
SELECT coalesce((SELECT e.xid FROM events e WHERE e.xid < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY e.xid DESC, e.id DESC LIMIT 1), '0'::xid8)::text AS xid,
       coalesce((SELECT e.id FROM events e WHERE e.xid < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY e.xid DESC, e.id DESC LIMIT 1), 0)::bigint AS id;

-- name: EventGetMany :many
SELECT e.id, e.xid::text AS xid, e.event_type, e.occurred_at, e.source, e.actor_id, e.actor_kind, e.ref, e.payload, e.schema_version, e.audience
FROM events e WHERE e.id = ANY (@ids::bigint[]);
