package migrate_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/migrate"
	"github.com/scidex/substrate/migrations"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

func pool(t *testing.T) *pgxpool.Pool {
	p, err := pgxpool.New(context.Background(), dbtest.EmptyURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// Eight processes' worth of migrators starting at once apply every migration
// exactly once; a second run applies nothing.
func TestConcurrentUpAppliesOnce(t *testing.T) {
	p := pool(t)
	var wg sync.WaitGroup
	applied := make([]int, 8)
	errs := make([]error, 8)
	for i := range applied {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each migrator has its own pool, as separate processes would.
			pp, err := pgxpool.New(context.Background(), p.Config().ConnString())
			if err != nil {
				errs[i] = err
				return
			}
			defer pp.Close()
			m, err := migrate.New(pp, migrations.FS, nil)
			if err != nil {
				errs[i] = err
				return
			}
			applied[i], errs[i] = m.Up(context.Background())
		}()
	}
	wg.Wait()
	total := 0
	for i := range applied {
		if errs[i] != nil {
			t.Fatalf("migrator %d: %v", i, errs[i])
		}
		total += applied[i]
	}
	m, _ := migrate.New(p, migrations.FS, nil)
	if total != m.Latest() {
		t.Errorf("migrations applied %d times in all, want %d (each once)", total, m.Latest())
	}
	var rows int
	if err := p.QueryRow(context.Background(), "SELECT count(*) FROM schema_migrations").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != m.Latest() {
		t.Errorf("schema_migrations has %d rows, want %d", rows, m.Latest())
	}
	if n, err := m.Up(context.Background()); err != nil || n != 0 {
		t.Errorf("second Up applied %d (%v), want 0", n, err)
	}
}

// A failing migration rolls back entirely and stops the run; the ones before it stay.
func TestFailingMigrationRollsBack(t *testing.T) {
	p := pool(t)
	fsys := fstest.MapFS{
		"0001_a.up.sql": {Data: []byte("CREATE TABLE a (x int);")},
		"0002_b.up.sql": {Data: []byte("CREATE TABLE b (x int); SELECT no_such_function();")},
		"0003_c.up.sql": {Data: []byte("CREATE TABLE c (x int);")},
	}
	m, err := migrate.New(p, fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Up(context.Background()); err == nil {
		t.Fatal("Up succeeded past a broken migration")
	}
	var a, b, c bool
	_ = p.QueryRow(context.Background(), "SELECT to_regclass('a') IS NOT NULL, to_regclass('b') IS NOT NULL, to_regclass('c') IS NOT NULL").Scan(&a, &b, &c)
	if !a || b || c {
		t.Errorf("tables a=%v b=%v c=%v, want only a", a, b, c)
	}
	if v, _ := m.Current(context.Background()); v != 1 {
		t.Errorf("current version %d, want 1", v)
	}
}

// Down reverts in reverse order, and a gap in the numbering is caught before anything runs.
func TestDownAndGaps(t *testing.T) {
	p := pool(t)
	m, _ := migrate.New(p, migrations.FS, nil)
	if _, err := m.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, err := m.Down(context.Background(), 0); err != nil || n != m.Latest() {
		t.Fatalf("Down: %d %v", n, err)
	}
	var exists bool
	_ = p.QueryRow(context.Background(), "SELECT to_regclass('artifacts') IS NOT NULL").Scan(&exists)
	if exists {
		t.Error("artifacts table survived Down to 0")
	}
	_, err := migrate.New(p, fstest.MapFS{"0001_a.up.sql": {Data: []byte("")}, "0003_c.up.sql": {Data: []byte("")}}, nil)
	if err == nil {
		t.Error("a gap in migration numbers was accepted")
	}
}
