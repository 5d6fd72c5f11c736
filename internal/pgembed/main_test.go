package pgembed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ownerEnv switches the test binary into a child "scidex" that owns a
// cluster until it is killed; see TestAdoptAfterOwnerKilled.
const ownerEnv = "PGEMBED_TEST_OWNER_DIR"

// fastSettings trade crash safety of the OS (not of the server process)
// for speed where a test does not measure.
var fastSettings = map[string]string{"fsync": "off"}

func TestMain(m *testing.M) {
	if dir := os.Getenv(ownerEnv); dir != "" {
		os.Exit(runOwner(dir))
	}
	os.Exit(m.Run())
}

// runOwner starts the cluster, prints "ready <postmaster pid>" and holds the
// cluster until stdin closes.
func runOwner(dir string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Dir: dir, Settings: fastSettings})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Printf("ready %d\n", c.pm.pid)
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = c.Stop(context.Background())
	return 0
}

// testDir returns a fresh directory the cluster's OS user can traverse
// (t.TempDir is 0700, which an unprivileged user cannot enter when the
// tests run as root). Cleanup kills any server a failed test left behind.
func testDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgembed-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, sub := range []string{"postgres", "data-dir/postgres"} {
			killLeftover(t, filepath.Join(dir, sub, "data", "postmaster.pid"))
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return dir
}

func killLeftover(t *testing.T, pidPath string) {
	pf, err := readPidFile(pidPath)
	if err != nil || !processAlive(pf.pid) {
		return
	}
	t.Logf("cleanup: stopping leftover postgres pid %d", pf.pid)
	_ = syscall.Kill(pf.pid, syscall.SIGQUIT)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = (&postmaster{pid: pf.pid}).waitExit(ctx)
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// mustStart starts a cluster and registers a Stop for the end of the test.
func mustStart(t *testing.T, opts Options) *Cluster {
	t.Helper()
	c, err := Start(ctxFor(t), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	return c
}

func connect(t *testing.T, c *Cluster) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctxFor(t), c.ConnString())
	if err != nil {
		t.Fatalf("connect with %q: %v", c.ConnString(), err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// assertStopped checks what a user would see after Stop: no postmaster.pid
// and no postgres process.
func assertStopped(t *testing.T, c *Cluster, pid int) {
	t.Helper()
	if _, err := os.Stat(c.layout.pidFile()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("postmaster.pid still present after Stop (stat err %v)", err)
	}
	if processAlive(pid) {
		t.Errorf("postgres pid %d still alive after Stop", pid)
	}
	// The server runs in its own session: pgid = pid covers its children.
	if groupAlive(pid) {
		t.Errorf("processes of postgres pid %d still alive after Stop", pid)
	}
}
