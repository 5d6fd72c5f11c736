package pgembed

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// dirLock is the exclusive owner lock on a cluster directory. The kernel
// drops it when the file is closed or the process dies.
type dirLock struct{ f *os.File }

// acquireLock takes the owner lock without waiting and records our pid in
// the lock file for the error message another process would print.
func acquireLock(l layout) (*dirLock, error) {
	// os.OpenFile sets O_CLOEXEC, so postgres never inherits the lock.
	f, err := os.OpenFile(l.lockFile, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgembed: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readHolder(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &hintError{
				kind: ErrInUse,
				msg:  fmt.Sprintf("data directory %s is in use by another scidex process%s", l.dir, holder),
			}
		}
		return nil, fmt.Errorf("pgembed: lock %s: %w", l.lockFile, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

func readHolder(f *os.File) string {
	b, _ := io.ReadAll(io.LimitReader(f, 32))
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
		return " (pid " + strconv.Itoa(pid) + ")"
	}
	return ""
}

// release drops the lock.
func (d *dirLock) release() error { return d.f.Close() }
