package benchkit

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
)

var (
	cleanMu   sync.Mutex
	cleanups  []func()
	cleanOnce sync.Once
)

// AtExit registers f to run in Cleanup, after every function registered
// later: what was brought up last is undone first. f must not call Fail or
// Check (Cleanup runs once, and f would wait for itself).
func AtExit(f func()) {
	cleanMu.Lock()
	defer cleanMu.Unlock()
	cleanups = append(cleanups, f)
}

// Cleanup runs the functions registered with AtExit, newest first, once; a
// command defers it in main, and Fail and CleanupOnSignal call it.
func Cleanup() {
	cleanOnce.Do(func() {
		cleanMu.Lock()
		fs := cleanups
		cleanMu.Unlock()
		for i := len(fs) - 1; i >= 0; i-- {
			fs[i]()
		}
	})
}

// CleanupOnSignal makes SIGINT and SIGTERM clean up and exit (130 and 143), for
// a command whose processes run in their own process groups, which a Ctrl-C at
// the terminal does not reach.
func CleanupOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-ch
		fmt.Fprintln(os.Stderr, name()+": interrupted, cleaning up")
		Cleanup()
		if s == os.Interrupt {
			os.Exit(130)
		}
		os.Exit(143)
	}()
}

// Check fails the command if err is not nil.
func Check(err error) {
	if err != nil {
		Fail(err)
	}
}

// Fail prints err on standard error after the command's name (bench/mcp:
// ...), cleans up and exits with status 1. Any goroutine may call it.
func Fail(err error) {
	fmt.Fprintln(os.Stderr, name()+":", err)
	Cleanup()
	os.Exit(1)
}

// name is the command's package path inside the module (bench/mcp), the same
// whether it was started by go run or built; the executable's name otherwise.
func name() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
		if rest, ok := strings.CutPrefix(bi.Path, bi.Main.Path+"/"); ok {
			return rest
		}
		return bi.Path
	}
	return filepath.Base(os.Args[0])
}
