package pgembed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Cluster is a running embedded PostgreSQL cluster owned by this process.
// Its methods are safe for concurrent use.
type Cluster struct {
	layout  layout
	db      string
	log     *slog.Logger
	created bool
	adopted bool
	joined  int // the owner's postgres pid, for a guest (Options.Join)

	mu   sync.Mutex
	lock *dirLock // nil once stopped
	pm   *postmaster
}

// Start makes the cluster in opts.Dir ready for connections and returns it.
// On the first run it creates the cluster with initdb; later runs reuse it.
// If a server left behind by an earlier owner that died is still running,
// Start adopts it. Start fails with an error matching ErrInUse when another
// live process owns opts.Dir, and with one matching ErrNoBinaries when no
// usable PostgreSQL server binaries are installed. ctx bounds the whole
// start; the server itself keeps running after ctx ends.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	return start(ctx, opts, defaultFinder(opts.BinDir))
}

func start(ctx context.Context, opts Options, f finder) (*Cluster, error) {
	t0 := time.Now()
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	l, err := newLayout(opts.Dir)
	if err != nil {
		return nil, err
	}
	f.wantMajor = clusterMajor(l.data)
	binDir, err := f.find()
	if err != nil {
		return nil, err
	}
	r, err := resolveRunAs(opts.OSUser, l)
	if err != nil {
		return nil, err
	}
	if err := r.checkTraversable(l.dir); err != nil {
		return nil, err
	}
	if err := prepareClusterDir(l, r); err != nil {
		return nil, err
	}
	lock, err := acquireLock(l)
	if errors.Is(err, ErrInUse) && opts.Join {
		return join(ctx, l, opts, err)
	}
	if err != nil {
		return nil, err
	}
	if err := preparePrivateDirs(l, r); err != nil {
		_ = lock.release()
		return nil, err
	}
	c := &Cluster{layout: l, db: opts.Database, log: opts.Logger, lock: lock}
	if err := c.boot(ctx, binDir, r, opts.Settings); err != nil {
		_ = lock.release()
		return nil, err
	}
	c.log.Info("pgembed: postgres ready", "dir", l.dir, "pid", c.pm.pid,
		"created", c.created, "adopted", c.adopted, "took", time.Since(t0).Round(time.Millisecond))
	return c, nil
}

// boot creates the cluster if needed, then adopts or starts the server and
// makes sure the database exists. On failure it stops a server it started.
func (c *Cluster) boot(ctx context.Context, binDir string, r runAs, settings map[string]string) error {
	l := c.layout
	switch _, err := os.Stat(filepath.Join(l.data, "PG_VERSION")); {
	case errors.Is(err, fs.ErrNotExist):
		if err := initCluster(ctx, binDir, l, r, c.log); err != nil {
			return err
		}
		c.created = true
	case err != nil:
		return fmt.Errorf("pgembed: %w", err)
	default:
		if err := checkVersion(ctx, binDir, l); err != nil {
			return err
		}
		pid, err := findRunning(ctx, l, c.log)
		if err != nil {
			return err
		}
		if pid > 0 {
			c.log.Info("pgembed: adopting running postgres", "pid", pid)
			c.pm, c.adopted = &postmaster{pid: pid}, true
		}
	}
	if c.pm == nil {
		pm, logOffset, err := spawn(binDir, l, r, settings)
		if err != nil {
			return err
		}
		c.pm = pm
		if err := pm.waitReady(ctx, l, logOffset); err != nil {
			return c.abort(err)
		}
	}
	made, err := prepareDatabase(ctx, l, c.db)
	if err != nil {
		if c.adopted {
			return fmt.Errorf("%w; PostgreSQL (pid %d) was left running by an earlier owner: stop it (kill -INT %d) and retry", err, c.pm.pid, c.pm.pid)
		}
		return c.abort(err)
	}
	if made {
		c.log.Info("pgembed: created database", "name", c.db)
	}
	return nil
}

// abort stops the server boot started and returns err.
func (c *Cluster) abort(err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if stopErr := c.pm.stop(ctx, c.log); stopErr != nil {
		return errors.Join(err, stopErr)
	}
	return err
}

// ConnString returns a libpq/pgx keyword/value connection string that
// reaches the database named by Options.Database as the superuser "scidex"
// over the cluster's private Unix socket.
func (c *Cluster) ConnString() string { return connString(c.layout, c.db) }

// Created reports whether this Start created the cluster with initdb.
func (c *Cluster) Created() bool { return c.created }

// Adopted reports whether Start found the server already running, left
// behind by an earlier owner that died, and took it over.
func (c *Cluster) Adopted() bool { return c.adopted }

// Joined reports whether Start connected to a cluster another live process
// owns (Options.Join): its pid, or 0.
func (c *Cluster) Joined() int { return c.joined }

// join is Start of a guest: the cluster's owner is alive (inUse says who), so
// wait for its server to be ready and connect to it, taking nothing over.
func join(ctx context.Context, l layout, opts Options, inUse error) (*Cluster, error) {
	pid, err := findRunning(ctx, l, opts.Logger)
	if err != nil {
		return nil, err
	}
	if pid == 0 {
		// The owner holds the lock but runs no server (it is starting one,
		// or stopping): nothing to join yet.
		return nil, fmt.Errorf("%w; its PostgreSQL is not running, so there is nothing to join: retry once it serves", inUse)
	}
	opts.Logger.Info("pgembed: joined the cluster another scidex process owns", "dir", l.dir, "postgres_pid", pid)
	return &Cluster{layout: l, db: opts.Database, log: opts.Logger, joined: pid}, nil
}

// Stop shuts the server down (fast mode: open sessions are disconnected,
// completed transactions are safe), waits until the postmaster has exited
// and releases the directory lock. If ctx ends first, Stop falls back to an
// immediate shutdown. Calling Stop again after it succeeded does nothing;
// after a failure it tries again.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lock == nil {
		return nil // stopped, or joined: the owner stops it
	}
	t0 := time.Now()
	if err := c.pm.stop(ctx, c.log); err != nil {
		return err
	}
	err := c.lock.release()
	c.lock = nil
	c.log.Info("pgembed: postgres stopped", "pid", c.pm.pid, "took", time.Since(t0).Round(time.Millisecond))
	if err != nil {
		return fmt.Errorf("pgembed: release lock: %w", err)
	}
	return nil
}
