package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
)

// Source names this server as the origin of the events it writes.
const Source = "scidex-substrate"

// writeOp describes one mutation for the shared write transaction.
type writeOp struct {
	Operation      string
	IdempotencyKey string
	// Input is the request as the client sent it minus the idempotency key; its
	// canonical hash tells a replay from a reuse of the key for another request.
	Input any
	// Weight is how many writes the operation counts as against the rate limit
	// (a batch counts its writes); 0 means 1.
	Weight int
	// SingleStatement marks an operation whose writes are one SQL statement (a
	// plain create or update): without an idempotency key it runs without an
	// explicit transaction, the statement being atomic on its own.
	SingleStatement bool
	// Unmetered marks a server write that finishes what a metered one started
	// (a tool call's result, its events): refusing it for the rate limit would
	// leave the call running forever.
	Unmetered bool
	// Known are artifacts the server read for this request (ServerOpts.Known).
	Known []*Artifact
}

// writer is what a mutation sees inside its transaction.
type writer struct {
	q   *dbsqlc.Queries
	rc  *request.Context
	op  writeOp
	tx  pgx.Tx
	evs int
	// actorRecorded is set once the actor row exists for this transaction.
	actorRecorded *bool
	store         *Store
	// claim is set for a single-statement write with an idempotency key: the
	// write's statement claims the key itself.
	claim *keyClaim
	// hooks run after the write's transaction commits (afterCommit).
	hooks []func()
}

// recordActor makes sure the acting actor has its row (rows it writes refer to
// it), once per transaction and only when something is actually written, so a
// refused write costs no statement for it.
func (w *writer) recordActor(ctx context.Context) error {
	if (w.actorRecorded != nil && *w.actorRecorded) || (w.store != nil && w.store.actorKnown(w.rc)) {
		return nil
	}
	rc := w.rc
	if err := w.q.ActorUpsert(ctx, dbsqlc.ActorUpsertParams{ID: rc.Actor.ID, Kind: rc.Actor.Kind, Permissions: permStrings(rc.Actor.Permissions), SeenAt: rc.Now}); err != nil {
		return fmt.Errorf("record actor: %w", err)
	}
	if w.actorRecorded == nil {
		w.actorRecorded = new(bool)
	}
	*w.actorRecorded = true
	return nil
}

// write runs fn in one transaction with the idempotency protocol around it:
// a key seen before with the same request replays the stored result (replay is
// true); with a different request it is refused; a key first seen here stores
// fn's result in the same transaction as fn's writes.
func write[R any](ctx context.Context, s *Store, op writeOp, fn func(ctx context.Context, w *writer) (R, error)) (result R, replay bool, err error) {
	rc := request.From(ctx)
	if rc == nil {
		return result, false, errors.New("write outside a request context")
	}
	if rc.Anonymous || !rc.Actor.Has(auth.PermContributor) {
		return result, false, problem.New(problem.PermissionDenied, "%s needs the contributor permission", op.Operation)
	}
	if !op.Unmetered {
		if ok, wait := s.limiter.Allow(rc.Actor.ID, rc.Now, op.Weight); !ok {
			p := problem.New(problem.RateLimited, "too many writes from %s; retry in %s", rc.Actor.ID, wait.Round(1e6))
			p.RetryAfter = wait
			return result, false, p
		}
	}
	var reqHash string
	if op.IdempotencyKey != "" {
		if len(op.IdempotencyKey) > 200 {
			return result, false, problem.Invalid(problem.Field("input.idempotencyKey", "maxLength", "an idempotency key is at most 200 characters", nil))
		}
		var err error
		if reqHash, err = requestHash(op.Operation, op.Input); err != nil {
			return result, false, err
		}
	}
	if op.SingleStatement && s.tx == nil {
		return writeStatement(ctx, s, op, rc, reqHash, fn)
	}
	var (
		recorded bool
		hooks    []func()
	)
	run := func(tx pgx.Tx) error {
		w := &writer{q: s.q.WithTx(tx), rc: rc, op: op, tx: tx, actorRecorded: &recorded, store: s}
		if op.IdempotencyKey != "" {
			stored, claimed, err := w.claimKey(ctx, reqHash)
			if err != nil {
				return err
			}
			if !claimed {
				replay = true
				return json.Unmarshal(stored, &result)
			}
		}
		r, err := fn(ctx, w)
		if err != nil {
			return err
		}
		result = r
		if op.IdempotencyKey != "" {
			b, err := json.Marshal(r)
			if err != nil {
				return fmt.Errorf("encode result for idempotency: %w", err)
			}
			if err := w.q.IdempotencyStoreResult(ctx, b, rc.Actor.ID, op.IdempotencyKey); err != nil {
				return fmt.Errorf("store idempotent result: %w", err)
			}
		}
		hooks = w.hooks
		return nil
	}
	if s.tx != nil {
		// Joining the caller's transaction: a savepoint, so a refused write leaves
		// nothing behind and the transaction usable; the hooks wait for its commit.
		if err = pgx.BeginFunc(ctx, s.tx.tx, run); err == nil {
			for _, h := range afterActor(s, rc, recorded, hooks) {
				s.tx.AfterCommit(h)
			}
		}
	} else {
		err = s.ownTx(ctx, func(tx *Tx) error {
			if err := run(tx.tx); err != nil {
				return err
			}
			for _, h := range afterActor(s, rc, recorded, hooks) {
				tx.AfterCommit(h)
			}
			return nil
		})
	}
	if err != nil {
		var zero R
		if _, ok := problem.As(err); ok {
			return zero, false, err
		}
		return zero, false, fmt.Errorf("%s: %w", op.Operation, err)
	}
	return result, replay, nil
}

// ownTx runs fn in a transaction of its own (no savepoint: nothing else shares
// it) and commits, running the after-commit hooks fn registered.
func (s *Store) ownTx(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := s.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		if rbErr := tx.Rollback(ctx); rbErr != nil {
			s.log.Warn("rollback failed", "err", rbErr)
		}
		return err
	}
	return tx.Commit(ctx)
}

// afterActor adds to hooks remembering the actor row the write recorded, once
// it is committed.
func afterActor(s *Store, rc *request.Context, recorded bool, hooks []func()) []func() {
	if recorded {
		hooks = append(hooks, func() { s.rememberActor(rc) })
	}
	return hooks
}

// afterCommit registers f to run once this write's rows are committed: a
// cache invalidation must not run before the change it reflects is visible, or
// a concurrent reader caches the old state again. A write in a savepoint that
// rolls back drops its hooks.
func (w *writer) afterCommit(f func()) { w.hooks = append(w.hooks, f) }

// errKeyHeld is what a single-statement write returns when its idempotency key
// is held by another request: nothing was written, the stored result answers.
var errKeyHeld = errors.New("idempotency key held by another request")

// keyClaim is what a single-statement write needs to claim its key itself.
type keyClaim struct {
	key, requestHash string
	expiresAt        time.Time
}

// writeStatement runs a write that is one SQL statement (a create or an update)
// without an explicit transaction: the statement claims the idempotency key,
// storing the result it is about to make true, and writes everything else; it
// is atomic on its own. A first request with a key costs no statement more
// than one without: a replay, or a reuse of the key, is told by the claim
// failing (or by the request no longer passing its checks: a replayed update's
// base is no longer current), and answered from the key's record then.
func writeStatement[R any](ctx context.Context, s *Store, op writeOp, rc *request.Context, reqHash string,
	fn func(ctx context.Context, w *writer) (R, error)) (R, bool, error) {
	var zero R
	w := &writer{q: s.q, rc: rc, op: op, actorRecorded: new(bool), store: s}
	if op.IdempotencyKey != "" {
		w.claim = &keyClaim{key: op.IdempotencyKey, requestHash: reqHash, expiresAt: rc.Now.Add(IdempotencyTTL)}
	}
	r, err := fn(ctx, w)
	if *w.actorRecorded {
		s.rememberActor(rc) // its own statement: committed whatever follows
	}
	if err == nil {
		for _, h := range w.hooks { // the statement has committed
			h()
		}
	}
	if err != nil && w.claim != nil {
		stored, found, serr := storedResult[R](ctx, w, reqHash)
		if found || serr != nil {
			return stored, found, serr
		}
		if errors.Is(err, errKeyHeld) {
			// The holder's claim expired between our statement and this read.
			return zero, false, fmt.Errorf("%s: idempotency key %q changed hands; retry", op.Operation, op.IdempotencyKey)
		}
	}
	if err != nil {
		if _, ok := problem.As(err); ok {
			return zero, false, err
		}
		return zero, false, fmt.Errorf("%s: %w", op.Operation, err)
	}
	return r, false, nil
}

// storedResult answers from an unexpired idempotency record of this actor and
// key: the stored result for the same request, IDEMPOTENCY_KEY_REUSE for another.
func storedResult[R any](ctx context.Context, w *writer, reqHash string) (R, bool, error) {
	var r R
	prev, err := w.q.IdempotencyGet(ctx, w.rc.Actor.ID, w.op.IdempotencyKey)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && !prev.ExpiresAt.After(w.rc.Now)) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("read idempotency key: %w", err)
	}
	if prev.RequestHash != reqHash || prev.Operation != w.op.Operation {
		p := problem.New(problem.IdempotencyKeyReuse,
			"idempotency key %q was used at %s for a different %s request; use a new key for a new request",
			w.op.IdempotencyKey, prev.CreatedAt.Format("2006-01-02T15:04:05Z07:00"), prev.Operation)
		p.Extra = w.op.IdempotencyKey
		return r, false, p
	}
	if err := json.Unmarshal(prev.Result, &r); err != nil {
		return r, false, fmt.Errorf("decode stored result: %w", err)
	}
	return r, true, nil
}

// claimParams are the idempotency columns of a single-statement write; the
// result is stored by the same statement that makes it true.
func (w *writer) claimParams(result any) (key, requestHash string, stored []byte, expires time.Time, err error) {
	if w.claim == nil {
		return "", "", []byte("null"), w.rc.Now, nil
	}
	b, err := json.Marshal(result)
	if err != nil {
		return "", "", nil, time.Time{}, fmt.Errorf("encode result for idempotency: %w", err)
	}
	return w.claim.key, w.claim.requestHash, b, w.claim.expiresAt, nil
}

// claimKey claims the idempotency key for this request, or returns the result
// stored by the request that claimed it first. A concurrent request with the same
// key waits on the key's row until the first one commits or rolls back.
func (w *writer) claimKey(ctx context.Context, reqHash string) (stored json.RawMessage, claimed bool, err error) {
	_, err = w.q.IdempotencyClaim(ctx, dbsqlc.IdempotencyClaimParams{
		ActorID: w.rc.Actor.ID, Key: w.op.IdempotencyKey, Operation: w.op.Operation,
		RequestHash: reqHash, Now: w.rc.Now, ExpiresAt: w.rc.Now.Add(IdempotencyTTL),
	})
	if err == nil {
		return nil, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, false, fmt.Errorf("claim idempotency key: %w", err)
	}
	prev, err := w.q.IdempotencyGet(ctx, w.rc.Actor.ID, w.op.IdempotencyKey)
	if err != nil {
		return nil, false, fmt.Errorf("read idempotency key: %w", err)
	}
	if prev.RequestHash != reqHash || prev.Operation != w.op.Operation {
		p := problem.New(problem.IdempotencyKeyReuse,
			"idempotency key %q was used at %s for a different %s request; use a new key for a new request",
			w.op.IdempotencyKey, prev.CreatedAt.Format("2006-01-02T15:04:05Z07:00"), prev.Operation)
		p.Extra = w.op.IdempotencyKey
		return nil, false, p
	}
	return json.RawMessage(prev.Result), false, nil
}

// writeMeta is the identity a write stamps on its journal row.
type writeMeta struct {
	permissions            []string
	session, parentSession *string
	chain                  []string
	task                   *string
	delegation             []byte // jsonb, see delegationJSON
	key                    *string
}

func (w *writer) meta(operation, ref string) writeMeta {
	rc := w.rc
	m := writeMeta{permissions: permStrings(rc.Actor.Permissions), session: nonEmpty(rc.SessionID),
		parentSession: nonEmpty(rc.ParentSessionID), chain: rc.DelegationChain.ActorIDs(),
		task: nonEmpty(rc.TaskID), delegation: delegationJSON(rc.DelegationChain)}
	if w.op.IdempotencyKey != "" {
		m.key = &w.op.IdempotencyKey
	}
	return m
}

// journal records who made this write, on whose behalf, in which request.
func (w *writer) journal(ctx context.Context, operation, ref string) (int64, error) {
	return w.journalNote(ctx, operation, ref, "")
}

// journalNote is journal with a note the write makes about itself (a reason).
func (w *writer) journalNote(ctx context.Context, operation, ref, note string) (int64, error) {
	rc := w.rc
	if err := w.recordActor(ctx); err != nil {
		return 0, err
	}
	var key *string
	if w.op.IdempotencyKey != "" {
		key = &w.op.IdempotencyKey
	}
	id, err := w.q.JournalInsert(ctx, dbsqlc.JournalInsertParams{
		OccurredAt: rc.Now, RequestID: rc.RequestID, Operation: operation, Ref: ref, Note: nonEmpty(note),
		ActorID: rc.Actor.ID, ActorKind: rc.Actor.Kind, Permissions: permStrings(rc.Actor.Permissions),
		SessionID: nonEmpty(rc.SessionID), ParentSessionID: nonEmpty(rc.ParentSessionID),
		DelegationChain: rc.DelegationChain.ActorIDs(), IdempotencyKey: key,
		TaskID: nonEmpty(rc.TaskID), Delegation: delegationJSON(rc.DelegationChain),
	})
	if err != nil {
		return 0, fmt.Errorf("write journal: %w", err)
	}
	return id, nil
}

// event writes an event row and queues its NOTIFY, both committed with the change.
func (w *writer) event(ctx context.Context, eventType, ref string, payload any, audience []string) error {
	b, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", eventType, err)
	}
	id, err := w.q.EventInsert(ctx, dbsqlc.EventInsertParams{
		EventType: eventType, OccurredAt: w.rc.Now, Source: Source, ActorID: w.rc.Actor.ID,
		ActorKind: w.rc.Actor.Kind, Ref: nonEmpty(ref), Payload: b, SchemaVersion: 1, Audience: nonNil(audience),
	})
	if err != nil {
		return fmt.Errorf("write %s event: %w", eventType, err)
	}
	w.evs++
	if err := w.q.EventNotify(ctx, event.Channel, strconv.FormatInt(id, 10)); err != nil {
		return fmt.Errorf("notify %s event: %w", eventType, err)
	}
	return nil
}

func permStrings(ps []auth.Permission) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// DeleteExpiredIdempotencyKeys removes keys past their 24 hours; the server runs
// it periodically (an expired key is also reclaimed when it is used again).
func (s *Store) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int64, error) {
	n, err := s.q.IdempotencyDeleteExpired(ctx, now)
	if err != nil {
		return 0, fmt.Errorf("delete expired idempotency keys: %w", err)
	}
	return n, nil
}

// actorTTL is how long a recorded actor is trusted before its row is written
// again (so kind and permissions changes show up within that time).
const actorTTL = 10 * time.Minute

type knownActor struct {
	fingerprint string
	at          time.Time
}

func actorFingerprint(rc *request.Context) string {
	return rc.Actor.Kind + "|" + strings.Join(permStrings(rc.Actor.Permissions), ",")
}

// actorKnown reports whether this process recorded the actor, as it is now,
// recently; then its row need not be written again. Writes to one actor's row
// from every request would serialise them on its row lock.
func (s *Store) actorKnown(rc *request.Context) bool {
	v, ok := s.actors.Load(rc.Actor.ID)
	if !ok {
		return false
	}
	k := v.(knownActor)
	return k.fingerprint == actorFingerprint(rc) && rc.Now.Sub(k.at) < actorTTL && rc.Now.Sub(k.at) > -actorTTL
}

// rememberActor notes a committed actor row.
func (s *Store) rememberActor(rc *request.Context) {
	s.actors.Store(rc.Actor.ID, knownActor{fingerprint: actorFingerprint(rc), at: rc.Now})
}

// isAssert reports whether err is scidex_assert refusing with msg.
func isAssert(err error, msg string) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "P0001" && pg.Message == msg
}
