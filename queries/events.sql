-- name: EventInsert :one
INSERT INTO events (event_type, occurred_at, source, actor_id, actor_kind, ref, payload, schema_version, audience)
VALUES (@event_type, @occurred_at, @source, @actor_id, @actor_kind, @ref, @payload, @schema_version, @audience)
RETURNING id;

-- name: EventNotify :exec
-- Only the id travels on the channel; listeners read the row itself.
SELECT pg_notify(@channel::text, @payload::text);
