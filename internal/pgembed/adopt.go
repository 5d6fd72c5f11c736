package pgembed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"
)

// adoptWait bounds how long Start waits for a live postmaster it found to
// finish starting up or shutting down.
const adoptWait = 60 * time.Second

// findRunning looks for a postmaster left running on this cluster by an
// earlier owner. It returns its pid once it is ready, or 0 when none runs
// and a new one should be started. A stale postmaster.pid whose process is
// gone is left for postgres, which removes it itself.
func findRunning(ctx context.Context, l layout, log *slog.Logger) (int, error) {
	deadline := time.Now().Add(adoptWait)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		pf, err := readPidFile(l.pidFile())
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return 0, nil
		case err != nil:
			// Caught mid-write; read again below.
		case isZombie(pf.pid) || (processAlive(pf.pid) && notOurPostmaster(pf.pid, l.data)):
			// Postgres would take this pid for a live server and refuse to
			// start, so remove the stale file itself.
			log.Warn("pgembed: removing stale postmaster.pid", "pid", pf.pid)
			if err := os.Remove(l.pidFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return 0, fmt.Errorf("pgembed: %w", err)
			}
			return 0, nil
		case !processAlive(pf.pid):
			return 0, nil
		case pf.status == "ready":
			return pf.pid, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("pgembed: PostgreSQL (pid %d) is running on %s but did not become ready within %s (status %q); stop it (kill -INT %d) and retry",
				pf.pid, l.data, adoptWait, pf.status, pf.pid)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("pgembed: waiting for running PostgreSQL (pid %d): %w", pf.pid, ctx.Err())
		case <-tick.C:
		}
	}
}
