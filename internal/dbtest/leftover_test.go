package dbtest_test

import (
	"bufio"
	"bytes"
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

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/dbtest"
)

// trialEnv runs this test binary as a trial: TestTrial takes a database,
// says "trial: ready" and, for "block", waits to be interrupted or killed.
const trialEnv = "SCIDEX_DBTEST_TRIAL"

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// TestTrial is the trial's side of TestNothingOutlivesTheTestProcess; on its
// own it is skipped.
func TestTrial(t *testing.T) {
	mode := os.Getenv(trialEnv)
	if mode == "" {
		t.Skip("run by TestNothingOutlivesTheTestProcess")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbtest.EmptyURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	fmt.Println("trial: ready")
	if mode == "block" {
		time.Sleep(time.Hour)
	}
}

// A package's test binary run directly, without scripts/test's shared server,
// starts a private cluster. However the run ends (the tests finish, SIGINT, a
// SIGKILL nothing in the process can answer, or even a SIGKILL of its watchdog
// too), no postmaster of that cluster and no scidex-* directory outlives it:
// the last case is swept by the next run. Each trial has a temporary directory
// of its own (TMPDIR), so other runs on the machine are not looked at.
func TestNothingOutlivesTheTestProcess(t *testing.T) {
	if os.Getenv(trialEnv) != "" {
		t.Skip("inside a trial")
	}
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, cmd *exec.Cmd)
	}{
		{"tests finish", func(t *testing.T, cmd *exec.Cmd) {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("trial failed: %v", err)
			}
		}},
		{"SIGINT", func(t *testing.T, cmd *exec.Cmd) {
			_ = cmd.Process.Signal(syscall.SIGINT)
			_ = cmd.Wait()
		}},
		{"SIGKILL", func(t *testing.T, cmd *exec.Cmd) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmp := trialDir(t)
			mode := "block"
			if tc.name == "tests finish" {
				mode = "normal"
			}
			cmd, pm := startTrial(t, tmp, mode)
			tc.end(t, cmd)
			assertNothingLeft(t, tmp, pm)
		})
	}

	// The watchdog killed as well: the next run in the same temporary
	// directory finds the dead run's directory by its free owner lock, stops
	// its cluster and removes it before it makes its own.
	t.Run("SIGKILL of the watchdog too, then the next run", func(t *testing.T) {
		t.Parallel()
		tmp := trialDir(t)
		cmd, pm := startTrial(t, tmp, "block")
		for _, pid := range watchdogsOf(cmd.Process.Pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if !alive(pm) {
			t.Fatalf("postmaster %d gone with nothing left to stop it: the trial did not test the sweep", pm)
		}
		next, _ := startTrial(t, tmp, "normal")
		if err := next.Wait(); err != nil {
			t.Fatalf("second trial failed: %v", err)
		}
		assertNothingLeft(t, tmp, pm)
	})
}

// trialDir is a fresh TMPDIR for one trial, traversable by the cluster's user
// when the tests run as root (t.TempDir is 0700). Its cleanup stops whatever a
// failed trial left, so that a failure here leaks nothing either.
func trialDir(t *testing.T) string {
	t.Helper()
	tmp, err := os.MkdirTemp("", "dbtest-trial-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range processesIn(tmp) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		waitFor(10*time.Second, func() bool { return len(processesIn(tmp)) == 0 })
		_ = os.RemoveAll(tmp)
	})
	return tmp
}

// startTrial runs this test binary's TestTrial with TMPDIR=tmp and no test
// server configured, waits until it has a database and returns it with the pid
// of its cluster's postmaster.
func startTrial(t *testing.T, tmp, mode string) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTrial$", "-test.count=1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SCIDEX_") && !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "TMPDIR=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp, trialEnv+"="+mode)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	ready := make(chan bool, 1)
	var stdout strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		said := false
		for sc.Scan() {
			stdout.WriteString(sc.Text() + "\n")
			if sc.Text() == "trial: ready" && !said {
				said = true
				ready <- true
			}
		}
		if !said {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("trial exited before it was ready: %s%s", stdout.String(), stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("trial not ready within 2 minutes")
	}
	pids := postmastersIn(tmp)
	var pm int
	for _, pid := range pids {
		if alive(pid) {
			pm = pid
		}
	}
	if pm == 0 {
		t.Fatalf("trial is ready but no postmaster runs under %s (%v): it did not start a cluster of its own", tmp, pids)
	}
	return cmd, pm
}

// assertNothingLeft waits (a watchdog works after its parent is gone) until
// neither the trial's postmaster, nor any process working under tmp, nor any
// scidex-* directory in tmp is left, and fails naming what still is.
func assertNothingLeft(t *testing.T, tmp string, pm int) {
	t.Helper()
	var left []string
	waitFor(30*time.Second, func() bool {
		left = nil
		if alive(pm) {
			left = append(left, fmt.Sprintf("postmaster %d", pm))
		}
		for _, pid := range processesIn(tmp) {
			left = append(left, fmt.Sprintf("process %d working under %s", pid, tmp))
		}
		dirs, _ := filepath.Glob(filepath.Join(tmp, "scidex-*"))
		left = append(left, dirs...)
		return len(left) == 0
	})
	if len(left) > 0 {
		t.Errorf("left behind after 30s: %s", strings.Join(left, ", "))
	}
}

func waitFor(d time.Duration, done func() bool) {
	for deadline := time.Now().Add(d); !done() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

// postmastersIn reads the pids of the postmaster.pid files of dbtest clusters
// under tmp.
func postmastersIn(tmp string) []int {
	files, _ := filepath.Glob(filepath.Join(tmp, "scidex-dbtest-*", "pg", "data", "postmaster.pid"))
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processesIn lists the live processes whose working directory is under tmp:
// every PostgreSQL process works in its data directory.
func processesIn(tmp string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err == nil && strings.HasPrefix(strings.TrimSuffix(cwd, " (deleted)"), tmp+"/") && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// watchdogsOf lists the children of pid that run in the watchdog's mode.
func watchdogsOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if bytes.Contains(env, []byte("SCIDEX_TEST_WATCHDOG=1")) {
			pids = append(pids, child)
		}
	}
	return pids
}

func alive(pid int) bool {
	if pid <= 0 || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i+2 < len(stat) && stat[i+2] != 'Z'
}
