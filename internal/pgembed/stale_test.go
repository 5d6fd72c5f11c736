package pgembed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStartAfterServerKilled covers a stale postmaster.pid whose process is
// gone: both the owner and the server died (e.g. a power cut or OOM kill).
func TestStartAfterServerKilled(t *testing.T) {
	dir := filepath.Join(testDir(t), "postgres")
	opts := Options{Dir: dir, Logger: testLogger(t), Settings: fastSettings}
	c := mustStart(t, opts)
	if _, err := connect(t, c).Exec(ctxFor(t), "CREATE TABLE t (x int); INSERT INTO t VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	pid := c.pm.pid
	c.abandon()
	// The server runs in its own session, so its pgid is its pid.
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGroupGone(t, pid)
	if _, err := os.Stat(c.layout.pidFile()); err != nil {
		t.Fatalf("want a stale postmaster.pid after SIGKILL: %v", err)
	}

	c2 := mustStart(t, opts)
	if c2.Adopted() || c2.Created() {
		t.Fatalf("Adopted=%v Created=%v, want false false", c2.Adopted(), c2.Created())
	}
	var x int
	if err := connect(t, c2).QueryRow(ctxFor(t), "SELECT x FROM t").Scan(&x); err != nil || x != 42 {
		t.Fatalf("data after crash recovery: %d, %v", x, err)
	}
}

// TestStartWithRecycledPid covers a postmaster.pid naming a live process
// that is not this cluster's server (pids are reused after a reboot or a
// container restart). PostgreSQL alone would refuse to start.
func TestStartWithRecycledPid(t *testing.T) {
	dir := filepath.Join(testDir(t), "postgres")
	opts := Options{Dir: dir, Logger: testLogger(t), Settings: fastSettings}
	c := mustStart(t, opts)
	if err := c.Stop(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	stale := fmt.Sprintf("%d\n%s\n0\n%d\n%s\n\n0 0\nready   \n", other.Process.Pid, c.layout.data, port, c.layout.run)
	if err := os.WriteFile(c.layout.pidFile(), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}

	c2 := mustStart(t, opts)
	if c2.Adopted() {
		t.Fatal("adopted an unrelated process")
	}
	var one int
	if err := connect(t, c2).QueryRow(ctxFor(t), "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
}

// abandon simulates the owner dying: the lock goes, the server stays.
func (c *Cluster) abandon() {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.lock.release()
	c.lock = nil
}

// waitGroupGone polls until no live (non-zombie) process is left in
// process group pgid.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for groupAlive(pgid) {
		select {
		case <-ctx.Done():
			t.Fatalf("process group %d still alive", pgid)
		case <-time.After(pollInterval):
		}
	}
}

func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell zombies apart without /proc
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after "(comm) ": state ppid pgrp ...
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) && !isZombie(pid) {
			return true
		}
	}
	return false
}
