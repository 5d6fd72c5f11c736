// Package e2e builds the real scidex binary and runs it as a separate process for
// end-to-end tests: real flags, real signals, the real embedded PostgreSQL.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/dbtest/watchdog"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds ./cmd/scidex once per test process (with the race detector when
// the tests run with it) and returns its path. The egress shim networked
// sandboxes start with (cmd/scidex-egress-shim) is built beside it, where the
// server looks for it, as an installation has it.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := watchdog.TempDir("scidex-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "scidex")
		args := []string{"build", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "github.com/scidex/substrate/cmd/scidex")
		cmd := exec.Command("go", args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		shim := exec.Command("go", "build", "-o", filepath.Join(dir, "scidex-egress-shim"), "github.com/scidex/substrate/cmd/scidex-egress-shim")
		if out, err := shim.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build the egress shim: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// RemoveBinary removes what Binary built, if it built anything, and ends the
// watchdog (internal/dbtest/watchdog) once it has cleaned whatever else the
// harness left: a test process's TestMain calls it after the tests, so that
// every run does not leave a 50 MB binary in the temporary directory
// (TestEveryPackageStopsItsCluster holds every package using the harness to
// it). A run that never gets there (SIGINT, its timeout, SIGKILL) is cleaned
// by the watchdog once the process is gone: the binary, every data directory
// with its cluster, every server and daemon still running.
func RemoveBinary() {
	if binPath != "" {
		_ = watchdog.Remove(filepath.Dir(binPath))
	}
	watchdog.Close()
}

// DataDir returns a fresh data directory the embedded cluster's unprivileged
// user can reach (t.TempDir is 0700, which it cannot enter when tests run as
// root). When the test ends, the cluster a server left running in it (one the
// test SIGKILLed, or Proc.Kill's) is stopped and the directory removed; the
// watchdog does the same if the test process dies first.
func DataDir(t testing.TB) string {
	t.Helper()
	dir, err := watchdog.TempDir("scidex-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := watchdog.Remove(dir); err != nil {
			t.Errorf("e2e: remove the data directory: %v", err)
		}
	})
	return filepath.Join(dir, "data")
}

// Proc is a running `scidex serve`.
type Proc struct {
	Cmd     *exec.Cmd
	URL     string
	DataDir string
	done    chan struct{}
	waitErr error
	mu      sync.Mutex
	log     strings.Builder
}

// Opts configures Start.
type Opts struct {
	DataDir string
	Env     []string // extra KEY=VALUE
	Args    []string // extra flags
}

var listenRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

// Start runs `scidex serve` on a free port and waits until it is listening.
func Start(t testing.TB, o Opts) *Proc {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", o.DataDir}, o.Args...)
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = append(cleanEnv(), o.Env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	forget := watchdog.Process(cmd.Process.Pid) // killed if this process dies first
	p := &Proc{Cmd: cmd, DataDir: o.DataDir, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if m := listenRE.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	go func() { p.waitErr = cmd.Wait(); forget(); close(p.done) }()
	t.Cleanup(func() { p.Kill() })
	select {
	case a := <-addr:
		p.URL = "http://" + a
	case <-p.done:
		t.Fatalf("scidex serve exited before listening: %v\n%s", p.waitErr, p.Log())
	case <-time.After(90 * time.Second):
		t.Fatalf("scidex serve did not listen within 90s\n%s", p.Log())
	}
	return p
}

// cleanEnv is the environment without settings that would point the binary at
// another database or secret.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "DATABASE_URL=") || strings.HasPrefix(kv, "SCIDEX_") || strings.HasPrefix(kv, "OTEL_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Log returns what the server logged so far.
func (p *Proc) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Signal sends sig and waits for the process to exit, returning its error.
func (p *Proc) Signal(t testing.TB, sig syscall.Signal, within time.Duration) error {
	t.Helper()
	_ = p.Cmd.Process.Signal(sig)
	return p.Wait(t, within)
}

// Wait waits for the process to exit and returns its error; the test fails if
// it is still running after within.
func (p *Proc) Wait(t testing.TB, within time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.waitErr
	case <-time.After(within):
		t.Fatalf("scidex did not exit within %s\n%s", within, p.Log())
		return nil
	}
}

// Kill ends the process hard if it is still running.
func (p *Proc) Kill() {
	select {
	case <-p.done:
	default:
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
}

// Token runs `scidex token` against the same data dir.
func Token(t testing.TB, dataDir, sub, perms string) string {
	t.Helper()
	cmd := exec.Command(Binary(t), "token", "--data-dir", dataDir, "--sub", sub, "--permissions", perms)
	cmd.Env = cleanEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scidex token: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// GraphQL posts a query and decodes the response.
func (p *Proc) GraphQL(t testing.TB, token, query string, vars map[string]any) (data map[string]any, errs []any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+"/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data   map[string]any `json:"data"`
		Errors []any          `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Data, out.Errors
}

// Command returns an exec.Cmd of the binary with a clean environment.
func Command(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	return CommandContext(context.Background(), t, args...)
}

// CommandContext is Command killed when ctx ends.
func CommandContext(ctx context.Context, t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, Binary(t), args...)
	cmd.Env = cleanEnv()
	// A `scidex worker` or `mcp` a test starts dies with the test process
	// (the thread that started it, in fact: Go seldom ends one), and the
	// watchdog stops a cluster it left in a DataDir.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}
