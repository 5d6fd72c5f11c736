package bwrap

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/scidex/substrate/internal/egress"
	"github.com/scidex/substrate/internal/netguard"
	"github.com/scidex/substrate/runtimes"
)

// bwrapBackend runs sandboxes with bubblewrap on this machine.
type bwrapBackend struct {
	o      Options
	cg     *cgroups
	system []string
	// prlimit is util-linux prlimit(1), which applies the rlimits standing
	// in for missing cgroup controllers; "" when none is missing.
	prlimit string
	// cred is who bwrap runs as: the sandbox uid when the server is root,
	// nil (the server itself) otherwise.
	cred *syscall.Credential
	// guard dials for the egress proxies; shim is the egress shim's copy
	// in the cache ("" when the server has none: no tool gets the network).
	guard *netguard.Guard
	shim  string
}

// specificHosts are the only host:port pairs a network: specific tool may
// reach; nil for any other (the guard alone decides).
func specificHosts(c runtimes.Caps) []string {
	if c.Network != "specific" {
		return nil
	}
	return append([]string{}, c.AllowedHosts...)
}

// Name implements Backend.
func (b *bwrapBackend) Name() string { return Name }

// Check implements Backend: nothing beyond what the runtime checks.
func (b *bwrapBackend) Check(*runtimes.Tool) []runtimes.Problem { return nil }

// status is one JSON line of bwrap's --json-status-fd.
type status struct {
	ChildPID *int `json:"child-pid"`
	ExitCode *int `json:"exit-code"`
}

// run is one sandbox in flight: its process, pipes and what was seen.
type run struct {
	b     *bwrapBackend
	s     *Sandbox
	cmd   *exec.Cmd
	group *runGroup

	proxy     *egress.Proxy
	stdout    []byte
	stdoutErr error
	stderr    tail
	exitCode  *int
	killOnce  sync.Once
	readers   sync.WaitGroup
	overflow  chan struct{}
	setupNote string
}

// Run implements Backend.
func (b *bwrapBackend) Run(ctx context.Context, s *Sandbox) (*runtimes.Result, error) {
	r := &run{b: b, s: s, overflow: make(chan struct{})}
	res, err := r.execute(ctx)
	if r.group != nil {
		if derr := r.group.destroy(); derr != nil {
			b.o.Logger.Warn("bwrap: cgroup left behind", "call", s.ID, "err", derr)
		}
	}
	return res, err
}

func (r *run) execute(ctx context.Context) (*runtimes.Result, error) {
	b, s := r.b, r.s
	enforcement := b.enforcement()
	if b.cg != nil && len(b.cg.base) > 0 {
		g, err := b.cg.create(groupName(s.ID), limits{memory: s.Caps.MemoryBytes, pids: b.o.Pids, cpus: s.Caps.CPUCount})
		if err != nil {
			return nil, runtimes.Errorf(runtimes.CodeSetupFailed, true, "the sandbox's resource limits could not be set up: %v", err)
		}
		r.group = g
	}

	var files pipes
	defer files.closeAll()
	stdinR, stdinW := files.pipe()
	stdoutR, stdoutW := files.pipe()
	stderrR, stderrW := files.pipe()
	progR, progW := files.pipe()
	statusR, statusW := files.pipe()
	blockR, blockW := files.pipe()
	if files.err != nil {
		return nil, fmt.Errorf("sandbox pipes: %w", files.err)
	}

	extra := []*os.File{progW, statusW, blockR} // fds 3, 4, 5
	rl := enforcement.rlimits(s, b.o.Pids)
	var shimAS uint64
	var ctlServer *os.File
	if s.Caps.Network != "deny" {
		// The shim, a Go program, cannot start under a small RLIMIT_AS: it
		// sets that limit itself just before it executes the tool.
		shimAS, rl.as = rl.as, 0
		srv, box, err := egress.ControlPair()
		if err != nil {
			return nil, fmt.Errorf("sandbox egress: %w", err)
		}
		files.track(srv, box)
		ctlServer = srv
		extra = append(extra, box) // fd 6
		proxy, err := egress.New(egress.Options{Guard: b.guard, Hosts: specificHosts(s.Caps),
			Logger: b.o.Logger.With("call", s.ID)})
		if err != nil {
			return nil, runtimes.Errorf(runtimes.CodeRefused, true, "resource_caps.allowed_hosts: %v", err)
		}
		r.proxy = proxy
	}
	argv := b.argv(s, shimAS)
	r.cmd = exec.Command(b.o.Bwrap, argv...)
	if !rl.empty() {
		r.cmd = exec.Command(b.prlimit, append(append(rl.args(), b.o.Bwrap), argv...)...)
	}
	r.cmd.Env = []string{}
	r.cmd.Dir = "/"
	r.cmd.Stdin, r.cmd.Stdout, r.cmd.Stderr = stdinR, stdoutW, stderrW
	r.cmd.ExtraFiles = extra
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: b.cred}
	if err := r.cmd.Start(); err != nil {
		b.o.Logger.Error("bwrap: start", "call", s.ID, "err", err)
		if r.proxy != nil {
			r.proxy.Close()
		}
		return nil, runtimes.Errorf(runtimes.CodeSetupFailed, true, "the sandbox could not be started (the server's log has the reason)")
	}
	// The child's ends now belong to bwrap; ours must go, or no reader
	// would ever see EOF.
	for _, f := range append([]*os.File{stdinR, stdoutW, stderrW}, extra...) {
		files.close(f)
	}
	// The proxy serves the listener the shim hands over until the call
	// ends; then it and every tunnel are cut.
	var serving sync.WaitGroup
	if r.proxy != nil {
		files.untrack(ctlServer) // ReceiveListener consumes it
		lctx, stopWaiting := context.WithCancel(ctx)
		serving.Add(1)
		go func() {
			defer serving.Done()
			l, err := egress.ReceiveListener(lctx, ctlServer)
			if err != nil {
				b.o.Logger.Debug("bwrap: no egress listener", "call", s.ID, "err", err)
				return
			}
			r.proxy.Serve(l)
		}()
		defer func() { stopWaiting(); r.proxy.Close(); serving.Wait() }()
	}

	r.readers.Add(4)
	go func() { defer r.readers.Done(); r.readStdout(stdoutR) }()
	go func() { defer r.readers.Done(); _, _ = io.Copy(&r.stderr, stderrR) }()
	go func() { defer r.readers.Done(); readProgress(progR, s.Progress) }()
	go func() {
		defer r.readers.Done()
		defer files.close(stdinW)
		_, _ = stdinW.Write(s.Stdin) // EPIPE when the tool does not read its input: not an error
	}()

	allStatuses := make(chan status, 4)
	statuses := (<-chan status)(allStatuses)
	go readStatus(statusR, allStatuses)
	exited := make(chan error, 1)
	go func() { exited <- r.cmd.Wait() }()

	wall := time.NewTimer(s.Caps.WallTime)
	defer wall.Stop()
	var why string // set when the runtime stopped the sandbox
	released := false
	var waitErr error
wait:
	for {
		select {
		case st, ok := <-statuses:
			switch {
			case !ok:
				statuses = nil
			case st.ChildPID != nil && !released:
				released = true
				if err := r.release(*st.ChildPID, blockW); err != nil {
					r.kill()
					why = "setup"
					r.setupNote = err.Error()
				}
				files.close(blockW)
			case st.ExitCode != nil:
				r.exitCode = st.ExitCode
			}
		case waitErr = <-exited:
			break wait
		case <-wall.C:
			why = runtimes.CodeWallTimeout
			r.kill()
		case <-ctx.Done():
			why = runtimes.CodeCancelled
			r.kill()
		case <-r.overflow:
			why = runtimes.CodeOutputTooLarge
			r.kill()
		}
	}
	// Every process of the sandbox is gone with its pid namespace, so the
	// pipes reach EOF and the readers end. Were one to survive (it would have
	// to have left the namespace), the cgroup is emptied, and the readers are
	// cut off after a grace period rather than left waiting on it.
	r.killGroup()
	if !waitTimeout(&r.readers, readerGrace) {
		b.o.Logger.Error("bwrap: a sandbox process outlived bwrap; its pipes were closed", "call", s.ID)
		files.closeAll()
		r.readers.Wait()
	}
	// The status line written just before bwrap exited may still be in the
	// channel.
	for st := range allStatuses {
		if st.ExitCode != nil {
			r.exitCode = st.ExitCode
		}
	}
	var u usage
	if r.group != nil {
		u = r.group.usage()
	}
	if !u.measured {
		u.peakMemory, u.cpuTime = rusage(r.cmd.ProcessState)
	} else if u.cpuTime == 0 {
		_, u.cpuTime = rusage(r.cmd.ProcessState)
	}
	res, err := r.classify(why, waitErr, u, enforcement)
	if r.b.o.KilledFunc != nil {
		if reason := killReason(why, err, u); reason != "" {
			r.b.o.KilledFunc(reason)
		}
	}
	return res, err
}

// release puts the sandbox, blocked before the tool starts, into its
// cgroups and lets it go. Done here, between bwrap's setup and the tool's
// exec, nothing the tool runs can start outside its limits.
func (r *run) release(pid int, block *os.File) error {
	if r.group != nil {
		if err := r.group.add(pid); err != nil {
			return err
		}
	}
	if _, err := block.Write([]byte{'x'}); err != nil && !errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("release the sandbox: %w", err)
	}
	return nil
}

// kill ends the sandbox: bwrap's monitor gets SIGKILL, its child (the pid
// namespace's init) dies with it through --die-with-parent, and the kernel
// kills every process left in the namespace, setsid ones included. The
// cgroup is emptied again after the wait, as a second line.
func (r *run) kill() {
	r.killOnce.Do(func() {
		if r.cmd.Process != nil {
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
			_ = r.cmd.Process.Kill()
		}
		r.killGroup()
	})
}

// killGroup kills every process in the call's cgroups.
func (r *run) killGroup() {
	if r.group == nil {
		return
	}
	for _, d := range r.group.dirs {
		for _, p := range readPids(d + "/cgroup.procs") {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// readerGrace is how long the pipes may stay open after bwrap has exited.
const readerGrace = 5 * time.Second

// waitTimeout waits for wg for at most d and reports whether it finished.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// readStdout reads the tool's output up to the cap; past it, the sandbox is
// stopped rather than the output held.
func (r *run) readStdout(f *os.File) {
	max := r.b.o.MaxOutputBytes
	r.stdout, r.stdoutErr = runtimes.ReadCapped(f, max)
	if r.stdoutErr != nil {
		close(r.overflow)
		_, _ = io.Copy(io.Discard, f)
	}
}

func readStatus(f *os.File, out chan<- status) {
	defer close(out)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var st status
		if json.Unmarshal(sc.Bytes(), &st) == nil {
			out <- st
		}
	}
}

func rusage(ps *os.ProcessState) (peak int64, cpu time.Duration) {
	if ps == nil {
		return 0, 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss * 1024
	}
	return peak, ps.UserTime() + ps.SystemTime()
}

// groupName names a call's cgroup: the call id, made safe, and a random
// suffix so that two runs of one id never share a group.
func groupName(id string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, id)
	if len(safe) > 64 {
		safe = safe[:64]
	}
	return "call-" + safe + "-" + hex.EncodeToString(b[:])
}

// pipes tracks the pipe ends of one run so that every one is closed once.
type pipes struct {
	mu   sync.Mutex
	open map[*os.File]bool
	err  error
}

func (p *pipes) pipe() (*os.File, *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		p.err = errors.Join(p.err, err)
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open == nil {
		p.open = map[*os.File]bool{}
	}
	p.open[r], p.open[w] = true, true
	return r, w
}

// track adds files opened elsewhere, to be closed with the pipes.
func (p *pipes) track(fs ...*os.File) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open == nil {
		p.open = map[*os.File]bool{}
	}
	for _, f := range fs {
		p.open[f] = true
	}
}

// untrack hands a file over to whoever closes it now.
func (p *pipes) untrack(f *os.File) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.open, f)
}

func (p *pipes) close(f *os.File) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open[f] {
		delete(p.open, f)
		_ = f.Close()
	}
}

func (p *pipes) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for f := range p.open {
		_ = f.Close()
	}
	p.open = nil
}

// tail keeps the last tailBytes written to it: the end of the tool's
// stderr, where its error usually is.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 4 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "�")
}
