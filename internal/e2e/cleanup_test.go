package e2e_test

import (
	"bufio"
	"bytes"
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

	"github.com/scidex/substrate/internal/e2e"
)

// trialEnv runs this test binary as a trial: TestTrial builds the binary, runs
// `scidex serve` on a DataDir and a daemon beside it, says "trial: ready
// <serve pid> <daemon pid>" and, for "block", waits to be killed.
const trialEnv = "SCIDEX_E2E_TRIAL"

func TestMain(m *testing.M) {
	code := m.Run()
	e2e.RemoveBinary()
	os.Exit(code)
}

// TestTrial is the trial's side of TestHarnessLeavesNothing; on its own it is
// skipped.
func TestTrial(t *testing.T) {
	mode := os.Getenv(trialEnv)
	if mode == "" {
		t.Skip("run by TestHarnessLeavesNothing")
	}
	p := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t)})
	e2e.StartDaemon(t, "sleep", exec.Command("sleep", "3600"))
	fmt.Printf("trial: ready %d %d\n", p.Cmd.Process.Pid, daemonPid(t))
	if mode == "block" {
		time.Sleep(time.Hour)
	}
}

// daemonPid finds the sleep the trial started (Daemon keeps its Cmd to itself).
func daemonPid(t *testing.T) int {
	for _, pid := range childrenOf(os.Getpid()) {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); strings.TrimSpace(string(b)) == "sleep" {
			return pid
		}
	}
	t.Fatal("no sleep among the trial's children")
	return 0
}

// A test process using the harness leaves nothing when its tests end (the
// server Proc.Kill SIGKILLs leaves its cluster running, which DataDir's cleanup
// stops) nor when it is SIGKILLed itself: no `scidex serve`, no daemon, no
// postmaster, no scidex-* directory (the binary's, the data directory). Each
// trial has a TMPDIR of its own, so other runs on the machine are not looked at.
func TestHarnessLeavesNothing(t *testing.T) {
	if os.Getenv(trialEnv) != "" {
		t.Skip("inside a trial")
	}
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	for _, mode := range []string{"normal", "block"} {
		t.Run(map[string]string{"normal": "tests finish", "block": "SIGKILL"}[mode], func(t *testing.T) {
			t.Parallel()
			tmp := trialDir(t)
			cmd, pids := startTrial(t, tmp, mode)
			if mode == "block" {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			} else if err := cmd.Wait(); err != nil {
				t.Fatalf("trial failed: %v", err)
			}
			var left []string
			waitFor(30*time.Second, func() bool {
				left = nil
				for _, pid := range pids {
					if alive(pid) {
						left = append(left, "process "+strconv.Itoa(pid))
					}
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
		})
	}
}

// trialDir is a fresh TMPDIR for one trial, traversable by the cluster's user
// when the tests run as root. Its cleanup stops what a failed trial left.
func trialDir(t *testing.T) string {
	t.Helper()
	tmp, err := os.MkdirTemp("", "e2e-trial-")
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

// startTrial runs TestTrial with TMPDIR=tmp and waits until its server and
// daemon run; it returns them and the cluster's postmaster.
func startTrial(t *testing.T, tmp, mode string) (*exec.Cmd, []int) {
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
	ready := make(chan []int, 1)
	var stdout strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		var pids []int
		for sc.Scan() {
			stdout.WriteString(sc.Text() + "\n")
			if rest, ok := strings.CutPrefix(sc.Text(), "trial: ready "); ok && pids == nil {
				for _, f := range strings.Fields(rest) {
					pid, _ := strconv.Atoi(f)
					pids = append(pids, pid)
				}
				ready <- pids
			}
		}
		if pids == nil {
			ready <- nil
		}
	}()
	var pids []int
	select {
	case pids = <-ready:
		if pids == nil {
			_ = cmd.Wait()
			t.Fatalf("trial exited before it was ready: %s%s", stdout.String(), stderr.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("trial not ready within 3 minutes")
	}
	files, _ := filepath.Glob(filepath.Join(tmp, "scidex-e2e-*", "data", "postgres", "data", "postmaster.pid"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		first, _, _ := strings.Cut(string(b), "\n")
		if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && alive(pid) {
			pids = append(pids, pid)
		}
	}
	if len(pids) != 3 {
		t.Fatalf("want the server, the daemon and the server's postmaster running, have %v", pids)
	}
	return cmd, pids
}

func waitFor(d time.Duration, done func() bool) {
	for deadline := time.Now().Add(d); !done() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

// processesIn lists the live processes whose working directory is under tmp:
// every PostgreSQL process works in its data directory.
func processesIn(tmp string) []int {
	var pids []int
	eachProc(func(pid int) {
		cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
		if err == nil && strings.HasPrefix(strings.TrimSuffix(cwd, " (deleted)"), tmp+"/") && alive(pid) {
			pids = append(pids, pid)
		}
	})
	return pids
}

func childrenOf(parent int) []int {
	var pids []int
	eachProc(func(pid int) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(parent) {
			pids = append(pids, pid)
		}
	})
	return pids
}

func eachProc(f func(pid int)) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			f(pid)
		}
	}
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
