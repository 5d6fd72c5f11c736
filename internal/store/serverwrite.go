package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/scidex/substrate/internal/schema"
)

// ServerCreate creates an artifact for one of the server's own operations (op:
// invokeTool, runSkill…: the server kind in policy.go's operations): the only writes a type's
// server_only rule admits, so ledgers such as tool_call are written here and
// nowhere else. Everything else of the write path applies as for a client:
// content validation, validators, journal, event, idempotency. The journal
// and the provenance record op and the request's actor (on whose behalf the
// server acts). The caller has authorized the operation; p's content is the
// server's, never a client's passed through unchecked.
func (s *Store) ServerCreate(ctx context.Context, op string, p CreateParams) (*WriteResult, error) {
	if operations[op] != opServer {
		return nil, fmt.Errorf("store: ServerCreate: %q is not a server operation", op)
	}
	res, replay, err := write(ctx, s, writeOp{Operation: op, IdempotencyKey: p.IdempotencyKey, Input: p, SingleStatement: p.Type != schema.MetaType},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.create(ctx, w, p, op) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

// ServerUpdate writes a new version of an artifact for one of the server's own
// operations, as ServerCreate creates one: a tool call moving from running to
// succeeded. The optimistic lock applies: p names the base it read.
func (s *Store) ServerUpdate(ctx context.Context, op string, p UpdateParams) (*WriteResult, error) {
	if operations[op] != opServer {
		return nil, fmt.Errorf("store: ServerUpdate: %q is not a server operation", op)
	}
	p.operation = op
	res, replay, err := write(ctx, s, writeOp{Operation: op, IdempotencyKey: p.IdempotencyKey, Input: p,
		SingleStatement: !strings.HasPrefix(p.Ref, schema.MetaType+":")},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.update(ctx, w, p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}
