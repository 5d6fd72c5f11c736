package pgembed

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processAlive reports whether pid names a process that has not exited. A
// zombie (exited but not yet reaped, e.g. by an init that never reaps) counts
// as exited.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return !isZombie(pid)
}

// isZombie reads the process state from /proc (Linux); false when unknown.
func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}

// notOurPostmaster reports whether pid is known to be something other than
// the postmaster of data, i.e. a recycled pid from a stale postmaster.pid.
// The postmaster's working directory is its data directory; where that
// cannot be read, any process whose command line does not mention postgres
// counts as foreign. It is false when nothing can be told.
func notOurPostmaster(pid int, data string) bool {
	proc := "/proc/" + strconv.Itoa(pid)
	if cwd, err := os.Readlink(proc + "/cwd"); err == nil {
		return !samePath(cwd, data)
	}
	b, err := os.ReadFile(proc + "/cmdline")
	if err != nil || len(b) == 0 {
		return false
	}
	argv0, _, _ := strings.Cut(string(b), "\x00")
	return !strings.Contains(argv0, "postgres") && !strings.Contains(argv0, "postmaster")
}
