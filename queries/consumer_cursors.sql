-- name: ConsumerGet :one
-- A live consumer's whole state (expired ones are absent).
SELECT cursor_xid::text AS cursor_xid, cursor_id,
       coalesce(pending_xid::text, '')::text AS pending_xid, pending_id, pending_instance,
       answered_xid::text AS answered_xid, answered_id,
       coalesce(head_xid::text, '')::text AS head_xid, head_id, head_deliveries,
       deliveries, redeliveries, dead_letters, version, updated_at, expires_at
FROM consumer_cursors
WHERE actor_id = @actor_id AND consumer_id = @consumer_id AND expires_at > @now;

-- name: ConsumerSave :exec
-- Moves a consumer's cursor forward (never back) and extends its life.
INSERT INTO consumer_cursors (actor_id, consumer_id, cursor_xid, cursor_id, updated_at, expires_at)
VALUES (@actor_id, @consumer_id, (sqlc.arg(cursor_xid)::text)::xid8, @cursor_id, @now, @expires_at)
ON CONFLICT (actor_id, consumer_id) DO UPDATE
SET cursor_xid = excluded.cursor_xid, cursor_id = excluded.cursor_id, updated_at = excluded.updated_at, expires_at = excluded.expires_at,
    version = consumer_cursors.version + 1
WHERE (consumer_cursors.cursor_xid, consumer_cursors.cursor_id) < (excluded.cursor_xid, excluded.cursor_id)
   OR consumer_cursors.expires_at <= excluded.updated_at;

-- name: ConsumerCreate :execrows
-- Creates a consumer, or starts an expired one afresh; 0 rows when a live one
-- exists (another poll created it first).
INSERT INTO consumer_cursors AS c (actor_id, consumer_id, cursor_xid, cursor_id,
    pending_xid, pending_id, pending_instance, answered_xid, answered_id,
    head_xid, head_id, head_deliveries, deliveries, redeliveries, dead_letters, version, updated_at, expires_at)
VALUES (@actor_id, @consumer_id, (sqlc.arg(cursor_xid)::text)::xid8, @cursor_id,
    (sqlc.narg(pending_xid)::text)::xid8, sqlc.narg(pending_id), sqlc.narg(pending_instance),
    (sqlc.arg(answered_xid)::text)::xid8, @answered_id,
    (sqlc.narg(head_xid)::text)::xid8, sqlc.narg(head_id), @head_deliveries,
    @deliveries, @redeliveries, @dead_letters, 1, @now, @expires_at)
ON CONFLICT (actor_id, consumer_id) DO UPDATE
SET cursor_xid = excluded.cursor_xid, cursor_id = excluded.cursor_id,
    pending_xid = excluded.pending_xid, pending_id = excluded.pending_id, pending_instance = excluded.pending_instance,
    answered_xid = excluded.answered_xid, answered_id = excluded.answered_id,
    head_xid = excluded.head_xid, head_id = excluded.head_id, head_deliveries = excluded.head_deliveries,
    deliveries = excluded.deliveries, redeliveries = excluded.redeliveries, dead_letters = excluded.dead_letters,
    version = c.version + 1, updated_at = excluded.updated_at, expires_at = excluded.expires_at
WHERE c.expires_at <= excluded.updated_at;

-- name: ConsumerUpdate :execrows
-- Writes a poll's answer over the state it read: 0 rows when the consumer
-- changed in between (the poll then reads it again).
UPDATE consumer_cursors
SET cursor_xid = (sqlc.arg(cursor_xid)::text)::xid8, cursor_id = @cursor_id,
    pending_xid = (sqlc.narg(pending_xid)::text)::xid8, pending_id = sqlc.narg(pending_id), pending_instance = sqlc.narg(pending_instance),
    answered_xid = (sqlc.arg(answered_xid)::text)::xid8, answered_id = @answered_id,
    head_xid = (sqlc.narg(head_xid)::text)::xid8, head_id = sqlc.narg(head_id), head_deliveries = @head_deliveries,
    deliveries = @deliveries, redeliveries = @redeliveries, dead_letters = @dead_letters,
    version = version + 1, updated_at = @now, expires_at = @expires_at
WHERE actor_id = @actor_id AND consumer_id = @consumer_id AND version = @version;

-- name: ConsumerDeleteExpired :execrows
DELETE FROM consumer_cursors WHERE expires_at <= @now;

-- name: ConsumerInstanceAlive :one
-- Whether the server process with this key is still connected to the database
-- (consumer_instance_alive, migration 0019).
SELECT consumer_instance_alive(sqlc.arg(space)::integer, sqlc.arg(instance)::integer) AS alive;

-- name: ConsumerDeadLetterAdd :exec
INSERT INTO consumer_dead_letters (actor_id, consumer_id, event_id, event_xid, deliveries, parked_at)
VALUES (@actor_id, @consumer_id, @event_id, (sqlc.arg(event_xid)::text)::xid8, @deliveries, @parked_at)
ON CONFLICT DO NOTHING;

-- name: ConsumerDeadLetterDeleteAll :exec
-- A consumer started afresh has no dead letters of a predecessor of its name.
DELETE FROM consumer_dead_letters WHERE actor_id = @actor_id AND consumer_id = @consumer_id;

-- name: ConsumerDeadLetterIDsAfter :many
-- The parked events after a cursor: a page of the consumer leaves them out.
SELECT event_id FROM consumer_dead_letters
WHERE actor_id = @actor_id AND consumer_id = @consumer_id AND (event_xid, event_id) > ((sqlc.arg(after_xid)::text)::xid8, sqlc.arg(after_id)::bigint);

-- name: ConsumerDeadLetterList :many
-- A consumer's dead letters, the most recently parked first.
SELECT event_id, event_xid::text AS event_xid, deliveries, parked_at FROM consumer_dead_letters
WHERE actor_id = @actor_id AND consumer_id = @consumer_id
ORDER BY parked_at DESC, event_id DESC
LIMIT @lim::integer;
