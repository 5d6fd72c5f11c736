// Package dbtest gives tests a real, migrated PostgreSQL database: never a mock.
//
// With SCIDEX_TEST_DATABASE_URL set (scripts/test starts one cluster for the
// whole run and sets it), tests use that server; otherwise the first test of a
// package starts a private cluster for the package (internal/pgembed) in a
// directory of its own, scidex-dbtest-<pid>-…, in the temporary directory.
// Main, from the package's TestMain, stops it when the tests end; a run that
// ends otherwise (SIGINT, its timeout, SIGKILL) is cleaned by the watchdog
// (internal/dbtest/watchdog), which stops the cluster and removes its directory
// once the test process is gone. Each test gets its own database, copied from a
// template that is migrated and seeded once per server, so tests never see each
// other's rows and need no cleanup.
package dbtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/dbtest/watchdog"
	"github.com/scidex/substrate/internal/migrate"
	"github.com/scidex/substrate/internal/pgembed"
	"github.com/scidex/substrate/internal/queue"
	"github.com/scidex/substrate/internal/schema/defaults"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/migrations"
)

// EnvURL names the server tests use when set: a superuser connection string.
const EnvURL = "SCIDEX_TEST_DATABASE_URL"

var (
	serverOnce sync.Once
	serverURL  string
	serverErr  error
	cluster    *pgembed.Cluster
	clusterDir string
	seq        atomic.Int64
)

// quietLogger keeps the test output for the tests.
var quietLogger = slog.New(slog.NewTextHandler(discard{}, &slog.HandlerOptions{Level: slog.LevelError}))

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Main wraps testing.M.Run so the package's private cluster, if one was started,
// is stopped and its directory removed when its tests end. Use it from TestMain:
// os.Exit(dbtest.Main(m)); every package whose tests use dbtest has one
// (TestEveryPackageStopsItsCluster). Without it the watchdog still stops the
// cluster once the process has exited, only later and not as gently.
func Main(m *testing.M) int {
	code := m.Run()
	if cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cluster.Stop(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "dbtest: stop cluster:", err)
		}
	}
	if clusterDir != "" {
		if err := watchdog.Remove(clusterDir); err != nil {
			fmt.Fprintln(os.Stderr, "dbtest: remove the cluster's directory:", err)
		}
	}
	watchdog.Close()
	return code
}

// server returns the superuser URL of the test server, starting a private
// cluster when no server is configured.
func server() (string, error) {
	serverOnce.Do(func() {
		if u := os.Getenv(EnvURL); u != "" {
			serverURL = u
			return
		}
		// Made traversable (0755) for the cluster's user when run as root,
		// and watched, before the cluster exists, so that a kill during
		// initdb leaves nothing either.
		dir, err := watchdog.TempDir("scidex-dbtest-")
		if err != nil {
			serverErr = err
			return
		}
		clusterDir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cluster, serverErr = pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(dir, "pg"), Settings: FastSettings, Logger: quietLogger})
		if serverErr == nil {
			serverURL = cluster.ConnString()
		}
	})
	return serverURL, serverErr
}

// FastSettings trade durability across OS crashes for speed; tests never need it.
var FastSettings = map[string]string{"fsync": "off", "full_page_writes": "off", "max_connections": "300"}

// URL returns a connection string for a fresh, migrated and seeded database of
// its own, dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	return newDatabase(t, true)
}

// EmptyURL returns a connection string for a fresh, empty database (for tests of
// migrations themselves), dropped when the test ends.
func EmptyURL(t testing.TB) string {
	t.Helper()
	return newDatabase(t, false)
}

func newDatabase(t testing.TB, migrated bool) string {
	t.Helper()
	base, err := server()
	if err != nil {
		t.Fatalf("dbtest: no database server: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tmpl := "template0"
	if migrated {
		if tmpl, err = template(ctx, base); err != nil {
			t.Fatalf("dbtest: template: %v", err)
		}
	}
	name := fmt.Sprintf("t_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, seq.Add(1))
	admin, err := pgx.Connect(ctx, withDB(base, "postgres"))
	if err != nil {
		t.Fatalf("dbtest: connect: %v", err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, tmpl)); err != nil {
		t.Fatalf("dbtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, withDB(base, "postgres"))
		if err != nil {
			t.Logf("dbtest: drop %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("dbtest: drop %s: %v", name, err)
		}
	})
	return withDB(base, name)
}

// Pool returns a pool on a fresh database of the test's own, closed when the
// test ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 32
	cfg.ConnConfig.Tracer = store.Tracer{}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("dbtest: pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

var (
	templateMu   sync.Mutex
	templateName string
)

// template returns the name of the migrated, seeded template database, building
// it once per server. Its name carries a hash of the migrations and the default
// schemas, so a changed schema gets a new template; an advisory lock keeps two
// test processes from building the same one.
func template(ctx context.Context, base string) (string, error) {
	templateMu.Lock()
	defer templateMu.Unlock()
	if templateName != "" {
		return templateName, nil
	}
	name, err := templateNameFor()
	if err != nil {
		return "", err
	}
	admin, err := pgx.Connect(ctx, withDB(base, "postgres"))
	if err != nil {
		return "", err
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(727272)"); err != nil {
		return "", err
	}
	defer admin.Exec(context.Background(), "SELECT pg_advisory_unlock(727272)") //nolint:errcheck
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)", name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		if err := buildTemplate(ctx, admin, base, name); err != nil {
			return "", err
		}
	}
	templateName = name
	return name, nil
}

func buildTemplate(ctx context.Context, admin *pgx.Conn, base, name string) error {
	build := name + "_build"
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+build+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+build); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, withDB(base, build))
	if err != nil {
		return err
	}
	err = Prepare(ctx, pool)
	pool.Close()
	if err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+build+" RENAME TO "+name); err != nil {
		return err
	}
	_, err = admin.Exec(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE true")
	return err
}

// Prepare migrates a database and seeds the default schemas, as `scidex migrate` does.
func Prepare(ctx context.Context, pool *pgxpool.Pool) error {
	m, err := migrate.New(pool, migrations.FS, quietLogger)
	if err != nil {
		return err
	}
	if _, err := m.Up(ctx); err != nil {
		return err
	}
	if err := queue.Migrate(ctx, pool, quietLogger); err != nil {
		return err
	}
	docs, err := DefaultDocuments()
	if err != nil {
		return err
	}
	_, err = store.New(store.Opts{Pool: pool, Logger: quietLogger}).SeedSchemas(ctx, docs)
	return err
}

// DefaultDocuments returns the embedded default schema documents.
func DefaultDocuments() ([]json.RawMessage, error) {
	names, err := fs.Glob(defaults.FS, "*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
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

func templateNameFor() (string, error) {
	h := sha256.New()
	for _, fsys := range []fs.FS{migrations.FS, defaults.FS} {
		names, err := fs.Glob(fsys, "*")
		if err != nil {
			return "", err
		}
		sort.Strings(names)
		for _, n := range names {
			b, err := fs.ReadFile(fsys, n)
			if err != nil {
				return "", err
			}
			h.Write([]byte(n))
			h.Write(b)
		}
	}
	h.Write([]byte(queue.RiverVersion)) // River's tables are part of the template too
	return "scidex_tmpl_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// withDB returns base (URL or keyword form) pointing at database name.
func withDB(base, name string) string {
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		i := strings.Index(base, "?")
		q := ""
		if i >= 0 {
			q = base[i:]
			base = base[:i]
		}
		slash := strings.LastIndex(base, "/")
		if slash > len("postgres://") {
			base = base[:slash]
		}
		return base + "/" + name + q
	}
	return base + " dbname=" + name // a later keyword wins
}
