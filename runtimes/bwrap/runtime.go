package bwrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/scidex/substrate/internal/netguard"
	"github.com/scidex/substrate/runtimes"
)

// Name is the runtime's name in a tool's `runtime`.
const Name = "bwrap"

// maxOutputDefault is the stdout cap when Options.MaxOutputBytes is 0.
const maxOutputDefault = runtimes.MaxOutputBytes

// knownBackends are the sandbox_backend values of the tool schema.
var knownBackends = []string{"bwrap", "docker", "batch", "k8s"}

// Runtime runs bundle programs in sandboxes.
type Runtime struct {
	o        Options
	cache    *cache
	bwrap    *bwrapBackend
	backends map[string]Backend
}

// New returns the runtime for o, or an error naming the option that is
// wrong. It finds the cgroup controllers it can use once, here; the caps of
// those it cannot use fall back to rlimits (Enforcement says which).
func New(o Options) (*Runtime, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	b := &bwrapBackend{o: o}
	uid, gid := os.Geteuid(), os.Getegid()
	if uid == 0 {
		uid, gid = o.UID, o.GID
		b.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	}
	etc := filepath.Join(o.CacheDir, ".etc")
	if err := writeEtc(etc, uid, gid); err != nil {
		return nil, fmt.Errorf("bwrap: write the sandbox's /etc in Options.CacheDir: %w", err)
	}
	b.system = systemMounts(etc)
	if b.guard, err = netguard.New(netguard.Options{Allow: o.EgressAllow, Resolver: o.EgressResolver,
		Who: "the sandbox's egress proxy"}); err != nil {
		return nil, fmt.Errorf("bwrap: Options.Egress%w", err)
	}
	if o.EgressShim != "" {
		if b.shim, err = installShim(o.EgressShim, o.CacheDir); err != nil {
			return nil, fmt.Errorf("bwrap: Options.EgressShim: %w", err)
		}
	}
	if !o.NoCgroups {
		b.cg = detectCgroups()
	}
	if e := b.enforcement(); e.Memory == byRlimit || e.Pids == byRlimit || e.CPU == byRlimit {
		if b.prlimit, err = exec.LookPath("prlimit"); err != nil {
			return nil, fmt.Errorf("bwrap: cgroup controllers are missing (%+v) and prlimit (util-linux), which would apply rlimits instead, is not installed: %w", e, err)
		}
	}
	closeInheritedFDs()
	r := &Runtime{o: o, cache: newCache(o.CacheDir, o.CacheBytes), bwrap: b, backends: map[string]Backend{Name: b}}
	for _, be := range o.Backends {
		r.backends[be.Name()] = be
	}
	return r, nil
}

// Name implements runtimes.Runtime.
func (r *Runtime) Name() string { return Name }

// Enforcement describes how this server enforces each cap of a bwrap
// sandbox ("cgroup" or "rlimit" for memory, pids and cpu), for the start-up
// log.
func (r *Runtime) Enforcement() map[string]any { return r.bwrap.enforcement().details() }

// Check implements runtimes.Runtime: runtime_config in its one shape,
// command and data paths inside the bundle, caps this server can honour, a
// backend it has.
func (r *Runtime) Check(t *runtimes.Tool) []runtimes.Problem {
	_, ps := r.check(t)
	return ps
}

func (r *Runtime) check(t *runtimes.Tool) (*config, []runtimes.Problem) {
	c, ps := decodeConfig(t)
	switch t.Caps.Network {
	case "", "deny":
	case "allow", "specific":
		if r.bwrap.shim == "" {
			ps = append(ps, runtimes.Problem{Path: "resource_caps.network", Constraint: "egress_configured",
				Message: "this server has no egress shim (--bwrap-egress-shim), so no bwrap tool can be given the network; ask for network deny"})
		}
		if t.Caps.Network == "specific" && len(t.Caps.AllowedHosts) == 0 {
			ps = append(ps, runtimes.Problem{Path: "resource_caps.allowed_hosts", Constraint: "required",
				Message: "network specific names the host:port pairs the tool may reach in allowed_hosts"})
		}
		for i, h := range t.Caps.AllowedHosts {
			if _, err := netguard.ParseAllow(h); err != nil {
				ps = append(ps, runtimes.Problem{Path: fmt.Sprintf("resource_caps.allowed_hosts[%d]", i), Constraint: "host_port",
					Message: fmt.Sprintf("%q: %v", h, err)})
			}
		}
	default:
		ps = append(ps, runtimes.Problem{Path: "resource_caps.network", Constraint: "enum",
			Message: fmt.Sprintf("network %q: want deny, allow or specific", t.Caps.Network)})
	}
	if t.Caps.VRAMGB > 0 && r.o.GPUs == 0 {
		ps = append(ps, runtimes.Problem{Path: "resource_caps.vram_gb", Constraint: "gpu_available",
			Message: fmt.Sprintf("the tool asks for %g GB of VRAM and this server has no GPU; it will not be run on the CPU instead", t.Caps.VRAMGB)})
	}
	if t.Caps.CPUCount < 0 || t.Caps.MemoryBytes < 0 || t.Caps.WallTime < 0 {
		ps = append(ps, runtimes.Problem{Path: "resource_caps", Constraint: "non_negative",
			Message: "cpu_count, memory_gb and wall_time_min must not be negative"})
	}
	be, bps := r.backend(t)
	ps = append(ps, bps...)
	if be != nil && be != Backend(r.bwrap) {
		ps = append(ps, be.Check(t)...)
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return c, nil
}

// backend is the sandbox backend a tool asks for.
func (r *Runtime) backend(t *runtimes.Tool) (Backend, []runtimes.Problem) {
	name := t.SandboxBackend
	if name == "" {
		name = Name
	}
	if be, ok := r.backends[name]; ok {
		return be, nil
	}
	for _, k := range knownBackends {
		if k == name {
			return nil, []runtimes.Problem{{Path: "sandbox_backend", Constraint: "backend_configured",
				Message: fmt.Sprintf("this server has no %s sandbox backend configured", name)}}
		}
	}
	return nil, []runtimes.Problem{{Path: "sandbox_backend", Constraint: "enum",
		Message: fmt.Sprintf("sandbox_backend %q: want one of %s", name, strings.Join(knownBackends, ", "))}}
}

// Run implements runtimes.Runtime: check the tool again, verify its bundle,
// and run the call on its backend.
func (r *Runtime) Run(ctx context.Context, call *runtimes.Call) (*runtimes.Result, error) {
	t := call.Tool
	c, ps := r.check(t)
	if len(ps) > 0 {
		msgs := make([]string, len(ps))
		for i, p := range ps {
			msgs[i] = p.Path + ": " + p.Message
		}
		return nil, runtimes.Errorf(runtimes.CodeRefused, true, "%s", strings.Join(msgs, "; "))
	}
	be, _ := r.backend(t)
	if err := ctx.Err(); err != nil {
		return nil, runtimes.Errorf(runtimes.CodeCancelled, false, "the call was cancelled before it started")
	}
	dir, release, err := r.cache.prepare(ctx, t, c.Command[0])
	if err != nil {
		var e *runtimes.Error
		if errors.As(err, &e) {
			return nil, e
		}
		r.o.Logger.Error("bwrap: prepare bundle", "tool", t.Name, "version", t.Version, "err", err)
		return nil, runtimes.Errorf(runtimes.CodeSetupFailed, true, "the tool's bundle could not be prepared (the server's log has the reason)")
	}
	defer release()
	caps := t.Caps
	if caps.WallTime == 0 {
		caps.WallTime = r.o.WallTime
	}
	if caps.MemoryBytes == 0 {
		caps.MemoryBytes = r.o.MemoryBytes
	}
	if caps.Network == "" {
		caps.Network = "deny"
	}
	progress := call.Progress
	if progress == nil {
		progress = func(runtimes.Progress) {}
	}
	args := []byte(call.Args)
	if len(args) == 0 {
		args = []byte(`{}`)
	}
	return be.Run(ctx, &Sandbox{ID: call.ID, BundleDir: dir, Command: c.Command, DataPaths: c.DataPaths,
		Caps: caps, Image: t.SandboxImage, Stdin: args, Progress: progress})
}

// closeInheritedFDs marks every descriptor above stderr close-on-exec. Go
// opens all of its own that way; one without the flag was inherited from
// whoever started the server, and would otherwise be passed through bwrap
// into every sandbox.
func closeInheritedFDs() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		syscall.CloseOnExec(fd)
	}
}

// installShim copies the egress shim into the cache, where the sandbox uid
// can reach it, and returns the copy's path. The copy is the server's, 0755,
// replaced whole (a rename) so that a running sandbox keeps its own.
func installShim(src, cacheDir string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", src)
	}
	tmp, err := os.CreateTemp(cacheDir, ".egress-shim-")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o755)
	}
	dst := filepath.Join(cacheDir, ".egress-shim")
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		return "", err
	}
	return dst, nil
}
