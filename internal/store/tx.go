package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Tx is a database transaction that store writes can join, so that they commit
// together with the caller's own statements: the tool dispatcher inserts its
// job (River's InsertTx) in the transaction that writes the tool_call asking
// for it, and neither exists without the other.
//
// Writes through Tx.Store() run in the transaction, each inside a savepoint, so
// a write the store refuses (a validation failure, a conflict) writes nothing
// and leaves the transaction usable. What a write must do only once its rows
// are visible to others — forget a cached schema, remember an actor row — it
// registers with AfterCommit; those hooks run after Commit succeeds and never
// after a rollback.
//
// A Tx is used by one goroutine at a time, like the pgx.Tx beneath it.
type Tx struct {
	tx    pgx.Tx
	view  *Store
	mu    sync.Mutex
	hooks []func()
	done  bool
	log   *slog.Logger
}

// Begin starts a transaction for writes that must commit with something else.
// End it with Commit or Rollback; deferring Rollback after a Commit is safe.
func (s *Store) Begin(ctx context.Context) (*Tx, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	return s.Join(tx), nil
}

// Join wraps a transaction the caller began (a River worker's, say) so store
// writes can join it. Commit it through the returned Tx, so the after-commit
// hooks run; committing the pgx.Tx directly skips them.
func (s *Store) Join(tx pgx.Tx) *Tx {
	t := &Tx{tx: tx, log: s.log}
	view := *s
	view.q = s.q.WithTx(tx)
	view.db = tx
	view.tx = t
	t.view = &view
	return t
}

// InTx runs fn in a new transaction and commits it when fn returns nil (then
// the after-commit hooks run); any error, or a panic, rolls it back.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) (err error) {
	tx, err := s.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			_ = tx.Rollback(ctx)
			panic(r)
		}
		if err != nil {
			_ = tx.Rollback(ctx)
		}
	}()
	if err = fn(ctx, tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Store is the store whose reads and writes go through this transaction.
func (t *Tx) Store() *Store { return t.view }

// Conn is the transaction itself, for the caller's other statements.
func (t *Tx) Conn() pgx.Tx { return t.tx }

// AfterCommit registers f to run once the transaction has committed; after a
// rollback it never runs. Hooks run in the order they were added.
func (t *Tx) AfterCommit(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.hooks = append(t.hooks, f)
}

// Commit commits the transaction, then runs the after-commit hooks. A hook
// that panics is logged and does not stop the others: the commit stands.
func (t *Tx) Commit(ctx context.Context) error {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return errors.New("store: transaction already ended")
	}
	t.done = true
	hooks := t.hooks
	t.hooks = nil
	t.mu.Unlock()
	if err := t.tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	for _, f := range hooks {
		t.run(f)
	}
	return nil
}

// Rollback rolls the transaction back and drops the hooks. It is a no-op after
// Commit or Rollback, so it can be deferred.
func (t *Tx) Rollback(ctx context.Context) error {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return nil
	}
	t.done = true
	t.hooks = nil
	t.mu.Unlock()
	if err := t.tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return fmt.Errorf("rollback: %w", err)
	}
	return nil
}

func (t *Tx) run(f func()) {
	defer func() {
		if r := recover(); r != nil {
			t.log.Error("after-commit hook panicked", "panic", r)
		}
	}()
	f()
}
