package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/dbtest/watchdog"
)

// Daemon is a helper program a test runs beside the server (a load balancer,
// a connection pooler), in the foreground, its output kept for the failure
// message. It is killed when the test ends.
type Daemon struct {
	name    string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	mu      sync.Mutex
	log     strings.Builder
}

// StartDaemon starts cmd (its output captured) and arranges for it to be
// killed when the test ends.
func StartDaemon(t testing.TB, name string, cmd *exec.Cmd) *Daemon {
	t.Helper()
	d := &Daemon{name: name, cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = (*daemonLog)(d), (*daemonLog)(d)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	forget := watchdog.Process(cmd.Process.Pid) // killed if this process dies first
	go func() { d.waitErr = cmd.Wait(); forget(); close(d.done) }()
	t.Cleanup(func() {
		select {
		case <-d.done:
		default:
			_ = cmd.Process.Kill()
			<-d.done
		}
	})
	return d
}

type daemonLog Daemon

func (l *daemonLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log.Write(p)
}

// Log returns what the program wrote so far.
func (d *Daemon) Log() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log.String()
}

// Exited returns an error saying so once the program has exited (one that
// ends a wait for it to come up), nil while it runs.
func (d *Daemon) Exited() error {
	select {
	case <-d.done:
		return &stop{fmt.Errorf("%s exited: %v", d.name, d.waitErr)}
	default:
		return nil
	}
}

// NeedBinary finds a program the test drives (PATH, then the sbin
// directories Debian installs daemons in). scripts/deps installs them, so a
// missing one fails the test when this process could have installed it
// (root); otherwise the test is skipped, saying what to install.
func NeedBinary(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	msg := fmt.Sprintf("%s is not installed: run scripts/deps test (apt-get install %s)", name, name)
	if os.Geteuid() == 0 {
		t.Fatal(msg)
	}
	t.Skip(msg + " as root")
	return ""
}

// pollUntil runs f until it succeeds, fails for good (a *stop error) or ctx
// ends, returning its last error.
func pollUntil(ctx context.Context, f func() error) error {
	for {
		err := f()
		var s *stop
		if err == nil || errors.As(err, &s) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop is an error pollUntil does not retry.
type stop struct{ error }

func (s *stop) Unwrap() error { return s.error }
