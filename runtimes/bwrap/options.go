package bwrap

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/scidex/substrate/internal/netguard"
)

// Options configure the runtime. The zero value of every field but CacheDir
// has a working default; New reports a bad value naming the field.
type Options struct {
	// Bwrap is the bubblewrap binary; default: "bwrap" looked up in PATH.
	Bwrap string
	// CacheDir holds the materialized, verified bundles, one directory per
	// tool version. It must be writable by the server and, when the server
	// is root, traversable by UID (every ancestor world-executable), since
	// bwrap binds the bundle as that user. Required.
	CacheDir string
	// UID and GID are who the sandbox runs as when the server is root (bwrap
	// run as root is no sandbox: it could undo its own namespaces). 0 means
	// 65534 (nobody); root itself cannot be chosen. A server that is not
	// root runs bwrap as itself and ignores them.
	UID, GID int
	// GPUs is how many GPUs this server can give a tool; a tool asking for
	// VRAM on a server with none is refused in Check.
	GPUs int
	// TmpBytes caps each of the sandbox's three writable tmpfs mounts, /tmp,
	// the run dir /work and /dev/shm (default 64 MiB); nothing else of the
	// sandbox is writable. With cgroups their pages count against the memory
	// cap too; without, these sizes alone bound what a tool can fill.
	TmpBytes int64
	// Pids caps the processes (and threads) of one call (default 128).
	Pids int
	// MemoryBytes is the memory cap of a tool whose resource_caps give none
	// (default 512 MiB).
	MemoryBytes int64
	// WallTime is the wall time of a tool whose resource_caps give none
	// (default 60 s).
	WallTime time.Duration
	// MaxOutputBytes caps a tool's stdout (default runtimes.MaxOutputBytes).
	MaxOutputBytes int64
	// EgressShim is the path of cmd/scidex-egress-shim, the program that
	// opens a networked sandbox's proxy listener before its tool runs. ""
	// leaves this server without egress: a tool asking for network allow or
	// specific is refused in Check. New copies it into CacheDir.
	EgressShim string
	// EgressAllow is the operator's allow-list of host:port pairs a
	// networked sandbox may reach although they are loopback, private or
	// otherwise refused by the outbound guard: the same list, and the same
	// internal/netguard rules, as http_post's Options.Allow.
	EgressAllow []string
	// EgressResolver resolves the names a sandbox asks its proxy for
	// (net.DefaultResolver when nil); every address is judged by the guard.
	EgressResolver netguard.Resolver
	// CacheBytes caps the bundles kept in CacheDir (default 1 GiB): past
	// it the least recently used bundles not in use by a running call are
	// removed, to be materialized again from the store when next called.
	CacheBytes int64
	// NoCgroups turns the cgroup limits off and uses rlimits only (the
	// fallback taken on its own when the cgroup controllers are not usable).
	NoCgroups bool
	// Backends are the other sandbox backends this server runs (docker,
	// batch, k8s); a tool asking for one not given here is refused.
	Backends []Backend
	// Logger receives what must not reach the caller: bwrap's own error
	// output on a setup failure, cgroup clean-up failures. Default: discard.
	Logger *slog.Logger
	// KilledFunc, when set, is told of every sandbox killed, with why: a
	// runtimes error code (wall_timeout, memory_limit, cpu_limit,
	// pids_limit, output_too_large, cancelled). For metrics; it must return
	// promptly.
	KilledFunc func(reason string)
}

const (
	nobody             = 65534
	defaultTmpBytes    = 64 << 20
	defaultPids        = 128
	defaultMemoryBytes = 512 << 20
	defaultWallTime    = 60 * time.Second
	defaultCacheBytes  = 1 << 30
)

// withDefaults validates o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Bwrap == "" {
		o.Bwrap = "bwrap"
	}
	p, err := exec.LookPath(o.Bwrap)
	if err != nil {
		return o, fmt.Errorf("bwrap: Options.Bwrap %q: %w", o.Bwrap, err)
	}
	o.Bwrap = p
	if o.CacheDir == "" {
		return o, errors.New("bwrap: Options.CacheDir is required (where verified bundles are kept)")
	}
	if !filepath.IsAbs(o.CacheDir) {
		return o, fmt.Errorf("bwrap: Options.CacheDir %q must be an absolute path", o.CacheDir)
	}
	if o.UID < 0 || o.GID < 0 {
		return o, fmt.Errorf("bwrap: Options.UID/GID %d/%d: want a non-negative id (0 means %d)", o.UID, o.GID, nobody)
	}
	if o.UID == 0 {
		o.UID = nobody
	}
	if o.GID == 0 {
		o.GID = nobody
	}
	if o.GPUs < 0 {
		return o, fmt.Errorf("bwrap: Options.GPUs %d: want 0 or more", o.GPUs)
	}
	if o.TmpBytes < 0 || o.Pids < 0 || o.MemoryBytes < 0 || o.WallTime < 0 || o.MaxOutputBytes < 0 || o.CacheBytes < 0 {
		return o, errors.New("bwrap: Options.TmpBytes, Pids, MemoryBytes, WallTime, MaxOutputBytes and CacheBytes must not be negative")
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = defaultCacheBytes
	}
	if o.TmpBytes == 0 {
		o.TmpBytes = defaultTmpBytes
	}
	if o.Pids == 0 {
		o.Pids = defaultPids
	}
	if o.MemoryBytes == 0 {
		o.MemoryBytes = defaultMemoryBytes
	}
	if o.WallTime == 0 {
		o.WallTime = defaultWallTime
	}
	if o.MaxOutputBytes == 0 {
		o.MaxOutputBytes = maxOutputDefault
	}
	seen := map[string]bool{Name: true}
	for i, b := range o.Backends {
		if b == nil || b.Name() == "" {
			return o, fmt.Errorf("bwrap: Options.Backends[%d] is nil or has no name", i)
		}
		if seen[b.Name()] {
			return o, fmt.Errorf("bwrap: Options.Backends[%d]: backend %q given twice", i, b.Name())
		}
		seen[b.Name()] = true
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(o.CacheDir, 0o755); err != nil {
		return o, fmt.Errorf("bwrap: Options.CacheDir: %w", err)
	}
	if os.Geteuid() == 0 {
		if err := traversable(o.CacheDir); err != nil {
			return o, fmt.Errorf("bwrap: Options.CacheDir %q is not reachable by the sandbox uid %d: %w", o.CacheDir, o.UID, err)
		}
	}
	return o, nil
}

// traversable checks that every directory from / down to dir can be
// searched by any user, which is what a root server dropping to an
// unprivileged uid needs for bwrap to bind the bundle.
func traversable(dir string) error {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("%s is not world-searchable (mode %v)", d, fi.Mode().Perm())
		}
		if d == "/" {
			return nil
		}
	}
}
