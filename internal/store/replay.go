package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
)

// requestHash is what an idempotency key is bound to: the operation and its
// input (minus the key), canonically hashed.
func requestHash(op string, input any) (string, error) {
	in, err := json.Marshal(struct {
		Op    string `json:"op"`
		Input any    `json:"input"`
	}{op, input})
	if err != nil {
		return "", fmt.Errorf("%s: encode request for idempotency: %w", op, err)
	}
	h, err := canon.HashJSON(in)
	if err != nil {
		return "", fmt.Errorf("%s: hash request: %w", op, err)
	}
	return h, nil
}

// Replayed answers, before an operation checks anything, whether key was
// already used for it: the result the first request stored (the same input),
// IDEMPOTENCY_KEY_REUSE (another input), or nil (a new key). A server
// operation whose checks would refuse a replay (completing a packet already
// completed, by that very request) looks here first, then writes with the
// key, which claims it atomically with the write.
func (s *Store) Replayed(ctx context.Context, op, key string, input any) (*WriteResult, error) {
	rc := request.From(ctx)
	if key == "" || rc == nil {
		return nil, nil
	}
	if len(key) > 200 {
		return nil, problem.Invalid(problem.Field("input.idempotencyKey", "maxLength", "an idempotency key is at most 200 characters", nil))
	}
	h, err := requestHash(op, input)
	if err != nil {
		return nil, err
	}
	w := &writer{q: s.q, rc: rc, op: writeOp{Operation: op, IdempotencyKey: key}, store: s}
	res, found, err := storedResult[*WriteResult](ctx, w, h)
	if err != nil || !found {
		return nil, err
	}
	return s.finish(ctx, res, true)
}
