package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/schema"
)

// ServerOpts adjusts a server write to the operation it records.
type ServerOpts struct {
	// Event names the event the write emits instead of <type>.created or
	// <type>.updated: a tool call is started, completed or failed.
	Event string
	// Request is what the idempotency key is bound to, in place of the
	// content: invokeTool's key stands for the call the client asked for
	// (tool, version, args), not for the record the server writes, whose
	// timestamps differ on every attempt.
	Request any
	// Known are artifacts the server read for this very request, with the
	// request's actor (the tool a call runs): a reference in the content to
	// one of them, or to the version read, exists for that actor, so the
	// check of the content's references does not ask the database again
	// (two statements of every tool call's record).
	Known []*Artifact
	// Visibility, on a create, overrides the type's policy.read for this
	// artifact (a tool declaring its calls public); "" keeps the type's.
	Visibility string
	// Participants, on a create of a participants-only artifact, may read it
	// besides its creator (the owner of the tool a call ran).
	Participants []string
}

func serverOpts(opts []ServerOpts) ServerOpts {
	if len(opts) == 0 {
		return ServerOpts{}
	}
	return opts[0]
}

// serverOperation admits the server's own operations (invokeTool, runSkill…:
// the server kind in policy.go's operations) and the dedicated ones whose
// content the server checks itself (registerTool).
func serverOperation(caller, op string) error {
	if k := operations[op]; k != opServer && k != opDedicated {
		return fmt.Errorf("store: %s: %q is not a server operation", caller, op)
	}
	return nil
}

// ServerCreate creates an artifact for one of the server's own operations (op:
// invokeTool, runSkill…): the only writes a type's server_only rule admits, so
// ledgers such as tool_call are written here and nowhere else. Everything else
// of the write path applies as for a client: content validation, validators,
// journal, event, idempotency. The journal and the provenance record op and
// the request's actor (on whose behalf the server acts). The caller has
// authorized the operation; p's content is the server's, never a client's
// passed through unchecked.
func (s *Store) ServerCreate(ctx context.Context, op string, p CreateParams, opts ...ServerOpts) (*WriteResult, error) {
	if err := serverOperation("ServerCreate", op); err != nil {
		return nil, err
	}
	o := serverOpts(opts)
	p.event, p.visibility, p.participants = o.Event, o.Visibility, o.Participants
	var input any = p
	if o.Request != nil {
		input = o.Request
	}
	res, replay, err := write(ctx, s, writeOp{Operation: op, IdempotencyKey: p.IdempotencyKey, Input: input, SingleStatement: p.Type != schema.MetaType, Known: o.Known},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.create(ctx, w, p, op) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

// ServerUpdate writes a new version of an artifact for one of the server's own
// operations, as ServerCreate creates one: a tool call moving from running to
// succeeded. The optimistic lock applies: p names the base it read.
func (s *Store) ServerUpdate(ctx context.Context, op string, p UpdateParams, opts ...ServerOpts) (*WriteResult, error) {
	if err := serverOperation("ServerUpdate", op); err != nil {
		return nil, err
	}
	o := serverOpts(opts)
	p.operation, p.event = op, o.Event
	var input any = p
	if o.Request != nil {
		input = o.Request
	}
	res, replay, err := write(ctx, s, writeOp{Operation: op, IdempotencyKey: p.IdempotencyKey, Input: input, Unmetered: true,
		SingleStatement: !strings.HasPrefix(p.Ref, schema.MetaType+":"), Known: o.Known},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.update(ctx, w, p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

// ServerGet reads an artifact for one of the server's own operations (op:
// completeWorkPacket reading the call it finishes), whoever the request's
// actor may read: the dispatcher keeping its ledger reads a participants-only
// call an agent's work finishes, which the agent itself may not read. What it
// returns is for the operation; it never reaches a client as is.
func (s *Store) ServerGet(ctx context.Context, op string, r ref.Ref) (*Artifact, error) {
	if operations[op] != opServer {
		return nil, fmt.Errorf("store: ServerGet: %q is not a server operation", op)
	}
	return s.get(ctx, r, false)
}

// ServerLink adds a link for one of the server's own operations (op: runSkill
// linking the skill_result it stored to its call), as AddLink does for a
// client: the only writes a link's server_only rule admits.
func (s *Store) ServerLink(ctx context.Context, op string, p LinkParams) (*WriteResult, error) {
	if err := serverOperation("ServerLink", op); err != nil {
		return nil, err
	}
	res, replay, err := write(ctx, s, writeOp{Operation: op, IdempotencyKey: p.IdempotencyKey, Input: p, Unmetered: true},
		func(ctx context.Context, w *writer) (*WriteResult, error) { return s.link(ctx, w, op, p) })
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

// ServerSignal records a signal for one of the server's own operations (op:
// invokeTool, for a verb such as market.trade): the only writes a signal
// kind's server_only rule admits, so a market's trades are priced by the
// server and never forged with addSignal. Everything else of addSignal
// applies (the kind's declaration, roles, readability), as the request's
// actor. audience, when given, makes the signal.created event private to
// those actors (a trader's own trade).
func (s *Store) ServerSignal(ctx context.Context, op string, p SignalParams, audience []string) (*WriteResult, error) {
	if err := serverOperation("ServerSignal", op); err != nil {
		return nil, err
	}
	res, replay, err := write(ctx, s, writeOp{Operation: op, IdempotencyKey: p.IdempotencyKey, Input: p, Unmetered: true},
		func(ctx context.Context, w *writer) (*WriteResult, error) {
			return s.signalAs(ctx, w, p, &serverSignal{op: op, audience: audience})
		})
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, res, replay)
}

// EventParams is an event a server operation emits about an artifact without
// writing it: a tool call's progress, a budget debit.
type EventParams struct {
	Type    string
	Ref     string
	Payload any
	// Audience makes the event private to these actor ids; empty means the
	// artifact's own visibility decides (public for a public artifact).
	Audience []string
}

// ServerEvent records an event for one of the server's operations, committed
// (and announced) with the transaction it runs in, or on its own.
func (s *Store) ServerEvent(ctx context.Context, op string, e EventParams) error {
	if err := serverOperation("ServerEvent", op); err != nil {
		return err
	}
	if e.Ref != "" {
		if _, err := ref.Parse(e.Ref); err != nil {
			return fmt.Errorf("store: ServerEvent: %w", err)
		}
	}
	_, _, err := write(ctx, s, writeOp{Operation: op, Unmetered: true},
		func(ctx context.Context, w *writer) (struct{}, error) {
			return struct{}{}, w.event(ctx, e.Type, e.Ref, e.Payload, e.Audience)
		})
	return err
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
