-- name: JournalInsert :one
INSERT INTO write_journal (
    occurred_at, request_id, operation, ref, actor_id, actor_kind, permissions,
    session_id, parent_session_id, delegation_chain, idempotency_key, note, task_id, delegation
) VALUES (
    @occurred_at, @request_id, @operation, @ref, @actor_id, @actor_kind, @permissions,
    @session_id, @parent_session_id, @delegation_chain, @idempotency_key, @note, @task_id, @delegation
)
RETURNING id;
