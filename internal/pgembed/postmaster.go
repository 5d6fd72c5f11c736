package pgembed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pollInterval paces every wait on the server; 10 ms keeps start and stop
// latency low at negligible cost.
const pollInterval = 10 * time.Millisecond

// postmaster is a running server, either our child or an adopted one.
type postmaster struct {
	pid     int
	done    chan struct{} // closed when our child exits; nil when adopted
	waitErr error         // child's exit status, valid once done is closed
}

// spawn starts postgres directly (no pg_ctl, no shell), logging to the
// cluster's log file. The server outlives this process if it dies.
func spawn(binDir string, l layout, r runAs, settings map[string]string) (*postmaster, int64, error) {
	lf, offset, err := openLog(l, r)
	if err != nil {
		return nil, 0, fmt.Errorf("pgembed: %w", err)
	}
	defer lf.Close() // the child has its own copy
	args := []string{
		"-D", l.data,
		"-c", "listen_addresses=",
		"-c", "unix_socket_directories=" + quoteDirList(l.run),
		"-c", "port=" + strconv.Itoa(port),
	}
	names := make([]string, 0, len(settings))
	for name := range settings {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		args = append(args, "-c", name+"="+settings[name])
	}
	cmd := r.command(nil, l.dir, filepath.Join(binDir, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("pgembed: start postgres: %w", err)
	}
	p := &postmaster{pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, offset, nil
}

// quoteDirList quotes a path for unix_socket_directories, a comma list.
func quoteDirList(dir string) string {
	return `"` + strings.ReplaceAll(dir, `"`, `""`) + `"`
}

// waitReady waits until the postmaster reports "ready" in postmaster.pid,
// as pg_ctl start -w does, or until it exits or ctx ends.
func (p *postmaster) waitReady(ctx context.Context, l layout, logOffset int64) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if pf, err := readPidFile(l.pidFile()); err == nil && pf.pid == p.pid && pf.status == "ready" {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("pgembed: postgres exited during startup (%v): %s (log: %s)",
				p.waitErr, lastLines(logSince(l.logFile, logOffset), 3), l.logFile)
		case <-ctx.Done():
			return fmt.Errorf("pgembed: waiting for postgres to start: %w (log: %s)", ctx.Err(), l.logFile)
		case <-tick.C:
		}
	}
}

// stop requests a fast shutdown and waits for the postmaster to exit. If
// ctx ends first it falls back to an immediate shutdown (crash recovery on
// the next start) so that no server is left behind.
func (p *postmaster) stop(ctx context.Context, log *slog.Logger) error {
	if err := syscall.Kill(p.pid, syscall.SIGINT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("pgembed: signal postgres (pid %d): %w", p.pid, err)
	}
	if p.waitExit(ctx) == nil {
		return nil
	}
	log.Warn("pgembed: fast shutdown timed out, using immediate shutdown", "pid", p.pid)
	_ = syscall.Kill(p.pid, syscall.SIGQUIT)
	grace, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.waitExit(grace); err != nil {
		return fmt.Errorf("pgembed: postgres (pid %d) did not exit: %w", p.pid, err)
	}
	return nil
}

// waitExit waits until the postmaster has exited. For an adopted server,
// which is not our child, that means polling.
func (p *postmaster) waitExit(ctx context.Context) error {
	if p.done != nil {
		select {
		case <-p.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for processAlive(p.pid) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}
