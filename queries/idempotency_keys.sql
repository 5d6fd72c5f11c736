-- name: IdempotencyClaim :one
-- Claims (actor, key) for this request, taking over an expired claim. A concurrent
-- request with the same key blocks on the primary key until the first transaction
-- ends; if that one committed, no row comes back and the caller reads its result.
INSERT INTO idempotency_keys (actor_id, key, operation, request_hash, result, created_at, expires_at)
VALUES (@actor_id, @key, @operation, @request_hash, 'null', @now, @expires_at)
ON CONFLICT (actor_id, key) DO UPDATE
SET operation = excluded.operation, request_hash = excluded.request_hash, result = 'null',
    created_at = excluded.created_at, expires_at = excluded.expires_at
WHERE idempotency_keys.expires_at < excluded.created_at
RETURNING key;

-- name: IdempotencyGet :one
SELECT * FROM idempotency_keys WHERE actor_id = @actor_id AND key = @key;

-- name: IdempotencyStoreResult :exec
UPDATE idempotency_keys SET result = @result WHERE actor_id = @actor_id AND key = @key;

-- name: IdempotencyDeleteExpired :execrows
DELETE FROM idempotency_keys WHERE expires_at < @now;
