// Package migrate applies the embedded SQL migrations in order, each in its own
// transaction, under a Postgres advisory lock so that two processes starting at
// once neither apply a migration twice nor see a half-migrated database.
package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lockKey is the advisory lock every migrating process takes. Any constant works as
// long as nothing else in the database uses it; this one spells "scidexmg".
const lockKey int64 = 0x7363696465786d67

// Migration is one numbered step with its up and (optional) down SQL.
type Migration struct {
	Version int
	Name    string
	Up      string
	Down    string
}

var fileRE = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.(up|down)\.sql$`)

// Load reads NNNN_name.up.sql / NNNN_name.down.sql files from fsys. Versions must
// be contiguous from 1 so a missing file is caught before anything is applied.
func Load(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	byVersion := map[int]*Migration{}
	for _, e := range entries {
		m := fileRE.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		v, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		mig := byVersion[v]
		if mig == nil {
			mig = &Migration{Version: v, Name: m[2]}
			byVersion[v] = mig
		}
		if mig.Name != m[2] {
			return nil, fmt.Errorf("migration %04d has two names: %q and %q", v, mig.Name, m[2])
		}
		if m[3] == "up" {
			mig.Up = string(body)
		} else {
			mig.Down = string(body)
		}
	}
	out := make([]Migration, 0, len(byVersion))
	for _, m := range byVersion {
		if m.Up == "" {
			return nil, fmt.Errorf("migration %04d_%s has no .up.sql", m.Version, m.Name)
		}
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration versions must run 1..n without gaps; found %04d at position %d", m.Version, i+1)
		}
	}
	return out, nil
}

// Migrator applies migrations to one database.
type Migrator struct {
	pool       *pgxpool.Pool
	migrations []Migration
	log        *slog.Logger
}

// New returns a Migrator for the migrations in fsys.
func New(pool *pgxpool.Pool, fsys fs.FS, log *slog.Logger) (*Migrator, error) {
	ms, err := Load(fsys)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &Migrator{pool: pool, migrations: ms, log: log}, nil
}

// Latest is the highest version known to this binary.
func (m *Migrator) Latest() int { return len(m.migrations) }

// WithLock runs fn while holding the migration lock, so work that must follow
// migrations (seeding the schema registry) is serialised too. The lock is a
// transaction-scoped advisory lock held by a transaction left open until fn
// returns (fn's own statements run on other connections): a transaction keeps
// its server connection even through a transaction-mode pooler such as
// PgBouncer, where a session lock would be taken on one server connection and
// its unlock sent to another, leaving the lock held by an idle pooled
// connection and every later start waiting for it forever. The lock also
// ends with the transaction when this process dies.
func (m *Migrator) WithLock(ctx context.Context, fn func(ctx context.Context) error) error {
	if n := m.pool.Config().MaxConns; n < 2 {
		return fmt.Errorf("migrate: the pool allows %d connection(s); migrating needs 2 (one holds the lock)", n)
	}
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: begin lock transaction: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // ending it is what releases the lock
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey); err != nil {
		return fmt.Errorf("migrate: take lock: %w", err)
	}
	return fn(ctx)
}

// Up applies every migration not yet applied and returns how many it applied.
func (m *Migrator) Up(ctx context.Context) (int, error) {
	applied := 0
	err := m.WithLock(ctx, func(ctx context.Context) error {
		current, err := m.current(ctx)
		if err != nil {
			return err
		}
		if current > m.Latest() {
			return fmt.Errorf("database is at migration %d but this binary only knows %d: run a newer scidex", current, m.Latest())
		}
		for _, mig := range m.migrations[current:] {
			if err := m.apply(ctx, mig.Version, mig.Name, mig.Up, true); err != nil {
				return err
			}
			applied++
		}
		return nil
	})
	return applied, err
}

// Down reverts migrations above target, newest first.
func (m *Migrator) Down(ctx context.Context, target int) (int, error) {
	reverted := 0
	err := m.WithLock(ctx, func(ctx context.Context) error {
		current, err := m.current(ctx)
		if err != nil {
			return err
		}
		for v := current; v > target; v-- {
			mig := m.migrations[v-1]
			if mig.Down == "" {
				return fmt.Errorf("migration %04d_%s has no .down.sql", mig.Version, mig.Name)
			}
			if err := m.apply(ctx, mig.Version, mig.Name, mig.Down, false); err != nil {
				return err
			}
			reverted++
		}
		return nil
	})
	return reverted, err
}

// Current reports the version the database is at (0 for a fresh database).
func (m *Migrator) Current(ctx context.Context) (int, error) {
	return m.current(ctx)
}

func (m *Migrator) current(ctx context.Context) (int, error) {
	if _, err := m.pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY,
		name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var v int
	err := m.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("migrate: read current version: %w", err)
	}
	return v, nil
}

func (m *Migrator) apply(ctx context.Context, version int, name, sql string, up bool) error {
	verb, done := "apply", "migration applied"
	if !up {
		verb, done = "revert", "migration reverted"
	}
	err := pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sql); err != nil {
			return err
		}
		var err error
		if up {
			_, err = tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", version, name)
		} else {
			_, err = tx.Exec(ctx, "DELETE FROM schema_migrations WHERE version = $1", version)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("migrate: %s %04d_%s: %w", verb, version, name, err)
	}
	m.log.Info(done, "version", version, "name", name)
	return nil
}
