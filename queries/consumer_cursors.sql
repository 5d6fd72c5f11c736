-- name: ConsumerGet :one
SELECT cursor_xid::text AS cursor_xid, cursor_id, expires_at FROM consumer_cursors
WHERE actor_id = @actor_id AND consumer_id = @consumer_id AND expires_at > @now;

-- name: ConsumerSave :exec
-- Moves a consumer's cursor forward (never back) and extends its life.
INSERT INTO consumer_cursors (actor_id, consumer_id, cursor_xid, cursor_id, updated_at, expires_at)
VALUES (@actor_id, @consumer_id, (sqlc.arg(cursor_xid)::text)::xid8, @cursor_id, @now, @expires_at)
ON CONFLICT (actor_id, consumer_id) DO UPDATE
SET cursor_xid = excluded.cursor_xid, cursor_id = excluded.cursor_id, updated_at = excluded.updated_at, expires_at = excluded.expires_at
WHERE (consumer_cursors.cursor_xid, consumer_cursors.cursor_id) < (excluded.cursor_xid, excluded.cursor_id)
   OR consumer_cursors.expires_at <= excluded.updated_at;

-- name: ConsumerDeleteExpired :execrows
DELETE FROM consumer_cursors WHERE expires_at <= @now;
