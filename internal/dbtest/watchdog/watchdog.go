// Package watchdog makes what a test process leaves in the temporary directory
// go away when the process ends, however it ends: its PostgreSQL clusters, the
// servers and daemons it started, and their directories.
//
// A test binary's own cleanup (TestMain, t.Cleanup) runs only when it returns
// normally; a SIGINT, its -timeout panic or a SIGKILL ends it with none of that
// run, and the postmasters it started (in sessions of their own, so that they
// outlive a terminal's Ctrl-C) kept running with their directories. So the
// first TempDir or Process call starts a watchdog: the test binary itself
// re-executed in a helper mode, in a session of its own, reading a pipe whose
// only writer is this process. The process tells it each directory and process
// to clean up; when the pipe reads end of file, which the kernel makes happen
// when this process exits for any reason, the watchdog kills the processes,
// stops every PostgreSQL server whose data directory is under the directories
// (SIGQUIT, the immediate shutdown, then SIGKILL for what is left) and removes
// them. It is the sandbox's --die-with-parent, for what a test leaves on disk.
//
// What escapes even that (the watchdog itself killed, the machine rebooted) is
// swept by the next TempDir with the same prefix: each directory holds a lock
// file its owner keeps locked for its life, so one whose lock is free belongs
// to a process that is gone, whatever pid namespace it ran in.
package watchdog

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// helperEnv switches a binary that links this package into the watchdog.
const helperEnv = "SCIDEX_TEST_WATCHDOG"

// ownerLock is the lock file TempDir keeps locked in each directory it makes.
const ownerLock = ".scidex-owner.lock"

func init() {
	// The watchdog is this very binary (a test binary, testpg): it must not
	// run the tests, so it takes over before main does.
	if os.Getenv(helperEnv) == "1" {
		os.Exit(serve(os.Stdin))
	}
}

var (
	mu      sync.Mutex
	pipe    *os.File      // write end; nil before the first use and after Close
	exited  chan struct{} // closed when the watchdog process has exited
	started bool
	locks   = map[string]*os.File{} // TempDir's owner locks, by directory
)

// TempDir creates a fresh directory in os.TempDir() named
// <prefix><pid>-<random>, mode 0755 so that the embedded cluster's
// unprivileged user can traverse it when the tests run as root, and hands it to
// the watchdog: it is removed, with every PostgreSQL server under it stopped,
// when this process ends, if Remove has not removed it first. Directories with
// the same prefix that earlier processes left behind are removed first.
func TempDir(prefix string) (string, error) {
	sweep(os.TempDir(), prefix)
	dir, err := os.MkdirTemp("", prefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	// O_CLOEXEC (os.OpenFile's default) keeps the lock out of every child:
	// it is free exactly when this process is gone.
	f, err := os.OpenFile(dir+"/"+ownerLock, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return "", fmt.Errorf("watchdog: lock %s: %w", dir, err)
	}
	mu.Lock()
	locks[dir] = f
	mu.Unlock()
	if err := Watch(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// Watch hands an existing directory to the watchdog, as TempDir does its own:
// it is removed, with every PostgreSQL server under it stopped, when this
// process ends.
func Watch(dir string) error { return send("dir", strconv.Quote(dir)) }

// Remove stops every PostgreSQL server under dir, removes dir and tells the
// watchdog to forget it: a test's own cleanup of a TempDir.
func Remove(dir string) error {
	err := clean(dir)
	_ = send("forget-dir", strconv.Quote(dir))
	mu.Lock()
	if f := locks[dir]; f != nil {
		f.Close()
		delete(locks, dir)
	}
	mu.Unlock()
	return err
}

// Process arranges for the process pid (a server or daemon the test started) to
// be killed when this process ends. Call the returned func once it has been
// waited for, so that a later process reusing the pid is left alone; the
// watchdog checks the process's start time too.
func Process(pid int) (forget func()) {
	st, ok := startTime(pid)
	if !ok {
		return func() {}
	}
	arg := strconv.Itoa(pid) + " " + st
	_ = send("proc", arg)
	return func() { _ = send("forget-proc", arg) }
}

// Close ends the watchdog once this process has cleaned up after itself (the
// end of TestMain): it cleans up what is left and exits, and Close waits for it,
// up to a minute. Without Close the same happens when this process exits.
func Close() {
	mu.Lock()
	p, done := pipe, exited
	pipe = nil
	mu.Unlock()
	if p == nil {
		return
	}
	p.Close()
	select {
	case <-done:
	case <-time.After(time.Minute):
	}
}

// send writes one instruction to the watchdog, starting it first if needed.
func send(verb, arg string) error {
	mu.Lock()
	defer mu.Unlock()
	if !started {
		started = true
		if err := startLocked(); err != nil {
			return err
		}
	}
	if pipe == nil {
		return errors.New("watchdog: not running")
	}
	if _, err := fmt.Fprintf(pipe, "%s %s\n", verb, arg); err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	return nil
}

func startLocked() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	r, w, err := os.Pipe() // both ends O_CLOEXEC: no other child holds the write end
	if err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Stdin = r
	// No stdout or stderr: `go test` waits until every holder of the test
	// binary's output has closed it, and the watchdog outlives the binary.
	// Its own session keeps a terminal's Ctrl-C, meant for the tests, from it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return fmt.Errorf("watchdog: start: %w", err)
	}
	r.Close()
	pipe, exited = w, make(chan struct{})
	done := exited
	go func() { _ = cmd.Wait(); close(done) }()
	return nil
}
