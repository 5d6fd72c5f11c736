package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/migrate"
	"github.com/scidex/substrate/internal/pgembed"
	"github.com/scidex/substrate/internal/queue"
	"github.com/scidex/substrate/internal/schema/defaults"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/migrations"
)

// database is an open, migrated database and, on the embedded default, the
// cluster to stop when done.
type database struct {
	pool    *pgxpool.Pool
	cluster *pgembed.Cluster
	log     *slog.Logger
}

// openDatabase connects to DATABASE_URL, or starts the embedded cluster under
// dataDir, then migrates and seeds it. With join (`scidex mcp`, `scidex
// worker`), a cluster a running `scidex serve` owns is joined rather than
// refused: the process works beside the server, on its database.
//
// Each of tracers (the tracing's, when on) sees every statement beside the
// store's statement counter.
func openDatabase(ctx context.Context, dataDir string, log *slog.Logger, join bool, tracers ...pgx.QueryTracer) (*database, error) {
	db := &database{log: log}
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		start := time.Now()
		dir := filepath.Join(dataDir, "postgres")
		c, err := pgembed.Start(ctx, pgembed.Options{Dir: dir, OSUser: os.Getenv("SCIDEX_PG_USER"), Logger: log, Join: join})
		if err != nil {
			return nil, fmt.Errorf("embedded PostgreSQL: %w", err)
		}
		db.cluster = c
		url = c.ConnString()
		if pid := c.Joined(); pid != 0 {
			log.Info("joined the embedded PostgreSQL of the scidex process running on this data dir: this process works beside it, and stops working when it stops",
				"dir", dir, "postgres_pid", pid)
		} else {
			log.Info("embedded PostgreSQL ready", "dir", dir, "created", c.Created(), "adopted", c.Adopted(), "took", time.Since(start).Round(time.Millisecond))
		}
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		db.close()
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if !hasPoolMax(url) {
		cfg.MaxConns = 16
	}
	cfg.ConnConfig.Tracer = store.Tracer{}
	if tracers = slices.DeleteFunc(tracers, func(t pgx.QueryTracer) bool { return t == nil }); len(tracers) > 0 {
		cfg.ConnConfig.Tracer = multitracer.New(append([]pgx.QueryTracer{store.Tracer{}}, tracers...)...)
	}
	db.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		db.close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	if err := db.migrate(ctx); err != nil {
		db.close()
		return nil, err
	}
	return db, nil
}

// hasPoolMax reports whether the connection string sets the pool size itself.
func hasPoolMax(url string) bool { return strings.Contains(url, "pool_max_conns") }

// migrate applies migrations and seeds the default schemas under one lock, so
// replicas starting together do it once.
func (db *database) migrate(ctx context.Context) error {
	m, err := migrate.New(db.pool, migrations.FS, db.log)
	if err != nil {
		return err
	}
	if _, err := m.Up(ctx); err != nil {
		return err
	}
	docs, err := defaultDocuments()
	if err != nil {
		return err
	}
	return m.WithLock(ctx, func(ctx context.Context) error {
		if err := queue.Migrate(ctx, db.pool, db.log); err != nil {
			return err
		}
		s := store.New(store.Opts{Pool: db.pool, Logger: db.log})
		res, err := s.SeedSchemas(ctx, docs)
		if err != nil {
			return err
		}
		if len(res.Created)+len(res.Updated) > 0 {
			db.log.Info("schema registry seeded", "created", len(res.Created), "updated", len(res.Updated))
		}
		return nil
	})
}

func defaultDocuments() ([]json.RawMessage, error) {
	names, err := fs.Glob(defaults.FS, "*.json")
	if err != nil {
		return nil, err
	}
	docs := make([]json.RawMessage, 0, len(names))
	for _, n := range names {
		b, err := fs.ReadFile(defaults.FS, n)
		if err != nil {
			return nil, err
		}
		docs = append(docs, b)
	}
	return docs, nil
}

func (db *database) close() {
	if db.pool != nil {
		db.pool.Close()
		db.log.Info("database pool closed")
	}
	if db.cluster != nil && db.cluster.Joined() != 0 {
		db.log.Info("left the embedded PostgreSQL of the running scidex process running")
	} else if db.cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := db.cluster.Stop(ctx); err != nil {
			db.log.Error("stop embedded PostgreSQL", "err", err)
		} else {
			db.log.Info("embedded PostgreSQL stopped")
		}
	}
}
