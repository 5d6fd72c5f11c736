-- name: DeliveryInsertMany :exec
INSERT INTO message_deliveries (message_pk, recipient, created_at)
SELECT @message_pk::bigint, r, @now::timestamptz FROM unnest(@recipients::text[]) AS r
ON CONFLICT DO NOTHING;

-- name: DeliveryGetForUpdate :one
SELECT * FROM message_deliveries WHERE message_pk = @message_pk AND recipient = @recipient FOR UPDATE;

-- name: DeliveryUpdate :exec
UPDATE message_deliveries SET status = @status, acked_at = @acked_at, response = @response
WHERE message_pk = @message_pk AND recipient = @recipient;

-- name: DeliveryRecipients :many
SELECT recipient FROM message_deliveries WHERE message_pk = @message_pk ORDER BY recipient;

-- name: DeliveryGetMany :many
-- The deliveries of many messages to one recipient.
SELECT * FROM message_deliveries WHERE message_pk = ANY (@message_pks::bigint[]) AND recipient = @recipient;

-- name: MailboxList :many
-- One recipient's messages in a status, newest first; the archived ones
-- (completed at or before archive_before) only when asked for.
SELECT sqlc.embed(a), sqlc.embed(d)
FROM message_deliveries d
JOIN artifacts a ON a.pk = d.message_pk
WHERE d.recipient = @recipient AND d.status = @status AND d.message_pk < @before_pk::bigint
  AND (@include_archived::boolean OR d.status <> 'completed' OR d.acked_at > @archive_before::timestamptz)
ORDER BY d.message_pk DESC
LIMIT @lim::integer;

-- name: ArtifactsVisibleToParticipant :many
-- Which of many participants-only artifacts an actor may read: their creator,
-- one of their participants, or a recipient of a delivery.
SELECT a.pk FROM artifacts a
WHERE a.pk = ANY (@pks::bigint[])
  AND (a.created_by = @actor_id OR @actor_id = ANY (a.participants) OR EXISTS (
        SELECT 1 FROM message_deliveries d WHERE d.message_pk = a.pk AND d.recipient = @actor_id));

-- name: MailboxCount :one
SELECT count(*) FROM message_deliveries WHERE recipient = @recipient AND status = @status
  AND (@include_archived::boolean OR status <> 'completed' OR acked_at > @archive_before::timestamptz);
