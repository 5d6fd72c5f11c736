package pgembed

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFirstAndLaterStart(t *testing.T) {
	// Missing ancestors ("data-dir") are created traversable for the
	// cluster's OS user. Default (durable) settings: this test measures real
	// start times.
	dir := filepath.Join(testDir(t), "data-dir", "postgres")
	opts := Options{Dir: dir, Logger: testLogger(t)}

	t0 := time.Now()
	c := mustStart(t, opts)
	t.Logf("first start (initdb + start + create database): %v", time.Since(t0).Round(time.Millisecond))
	if !c.Created() || c.Adopted() {
		t.Fatalf("first start: Created=%v Adopted=%v, want true false", c.Created(), c.Adopted())
	}
	conn := connect(t, c)
	ctx := ctxFor(t)
	var db, listen string
	if err := conn.QueryRow(ctx, "SELECT current_database(), current_setting('listen_addresses')").Scan(&db, &listen); err != nil {
		t.Fatal(err)
	}
	if db != DefaultDatabase || listen != "" {
		t.Errorf("database %q listen_addresses %q, want %q and TCP off", db, listen, DefaultDatabase)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE note (body text); INSERT INTO note VALUES ('kept')"); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(ctx)
	assertPrivateSocketDir(t, c)
	if fi, err := os.Stat(filepath.Dir(dir)); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("created ancestor %s: %v, want mode 0755", filepath.Dir(dir), err)
	}

	pid := c.pm.pid
	t0 = time.Now()
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("stop: %v", time.Since(t0).Round(time.Millisecond))
	assertStopped(t, c, pid)
	if err := c.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	t0 = time.Now()
	c2 := mustStart(t, opts)
	t.Logf("later start: %v", time.Since(t0).Round(time.Millisecond))
	if c2.Created() || c2.Adopted() {
		t.Fatalf("later start: Created=%v Adopted=%v, want false false", c2.Created(), c2.Adopted())
	}
	var body string
	if err := connect(t, c2).QueryRow(ctx, "SELECT body FROM note").Scan(&body); err != nil || body != "kept" {
		t.Fatalf("data written before restart: %q, %v", body, err)
	}
	pid = c2.pm.pid
	if err := c2.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	assertStopped(t, c2, pid)
}

func assertPrivateSocketDir(t *testing.T, c *Cluster) {
	t.Helper()
	fi, err := os.Stat(c.layout.run)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("socket dir mode %v, want 0700", fi.Mode().Perm())
	}
	if uid, _, _ := fileOwner(c.layout.data); os.Geteuid() == 0 && uid == 0 {
		t.Errorf("running as root, but the cluster is owned by root")
	}
}

func TestAdoptAfterOwnerKilled(t *testing.T) {
	dir := filepath.Join(testDir(t), "postgres")
	pid := startOwnerAndKill(t, dir)
	if !processAlive(pid) {
		t.Fatalf("postgres pid %d died with its owner; nothing to adopt", pid)
	}

	t0 := time.Now()
	c := mustStart(t, Options{Dir: dir, Logger: testLogger(t), Settings: fastSettings})
	t.Logf("start adopting a running server: %v", time.Since(t0).Round(time.Millisecond))
	if !c.Adopted() || c.Created() {
		t.Fatalf("Adopted=%v Created=%v, want true false", c.Adopted(), c.Created())
	}
	if c.pm.pid != pid {
		t.Errorf("adopted pid %d, want %d", c.pm.pid, pid)
	}
	var one int
	if err := connect(t, c).QueryRow(ctxFor(t), "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(ctxFor(t)); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	assertStopped(t, c, pid)
}

// startOwnerAndKill runs a child process that starts the cluster in dir,
// SIGKILLs it once the server is ready and returns the server's pid.
func startOwnerAndKill(t *testing.T, dir string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ownerEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe() // closing it would stop the owner cleanly
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	pidStr, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	pid, convErr := strconv.Atoi(pidStr)
	if err != nil || !ok || convErr != nil {
		t.Fatalf("owner process said %q (%v)", line, err)
	}
	return pid
}

func TestSecondStartInUse(t *testing.T) {
	dir := filepath.Join(testDir(t), "postgres")
	c := mustStart(t, Options{Dir: dir, Logger: testLogger(t), Settings: fastSettings})

	_, err := Start(ctxFor(t), Options{Dir: dir, Logger: testLogger(t)})
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second Start: %v, want ErrInUse", err)
	}
	want := "data directory " + dir + " is in use by another scidex process"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	// The first owner is unaffected.
	var one int
	if err := connect(t, c).QueryRow(ctxFor(t), "SELECT 1").Scan(&one); err != nil {
		t.Fatalf("first owner after refused second Start: %v", err)
	}
}

func TestStopWaitsForShutdownWithOpenSessions(t *testing.T) {
	dir := filepath.Join(testDir(t), "postgres")
	c := mustStart(t, Options{Dir: dir, Logger: testLogger(t), Settings: fastSettings})
	conn := connect(t, c)
	if _, err := conn.Exec(ctxFor(t), "BEGIN"); err != nil { // an idle open transaction
		t.Fatal(err)
	}
	pid := c.pm.pid
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	assertStopped(t, c, pid)
}

// With Join, a second Start beside a live owner connects to the owner's
// server as a guest: it reaches the same database, says whom it joined, and
// its Stop leaves the owner's server running.
func TestJoinBesideALiveOwner(t *testing.T) {
	dir := filepath.Join(testDir(t), "postgres")
	owner := mustStart(t, Options{Dir: dir, Logger: testLogger(t), Settings: fastSettings})
	if _, err := connect(t, owner).Exec(ctxFor(t), "CREATE TABLE written_by_owner (x int)"); err != nil {
		t.Fatal(err)
	}
	guest, err := Start(ctxFor(t), Options{Dir: dir, Logger: testLogger(t), Join: true})
	if err != nil {
		t.Fatalf("Start with Join beside a live owner: %v", err)
	}
	if guest.Joined() == 0 || guest.Created() || guest.Adopted() {
		t.Fatalf("guest: joined %d, created %v, adopted %v", guest.Joined(), guest.Created(), guest.Adopted())
	}
	var n int
	if err := connect(t, guest).QueryRow(ctxFor(t), "SELECT count(*) FROM written_by_owner").Scan(&n); err != nil {
		t.Fatalf("the guest does not reach the owner's database: %v", err)
	}
	if err := guest.Stop(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	if err := connect(t, owner).QueryRow(ctxFor(t), "SELECT 1").Scan(&n); err != nil {
		t.Fatalf("the owner after the guest stopped: %v", err)
	}
}
