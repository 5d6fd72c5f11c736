package watchdog

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"
)

// alive reports whether pid names a process that has not exited; a zombie
// (exited, not yet reaped) counts as exited.
func alive(pid int) bool {
	if pid <= 0 || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || (b[i+2] != 'Z' && b[i+2] != 'X')
}

// startTime is field 22 of /proc/<pid>/stat, the process's start in clock
// ticks since boot: with the pid it names one process, not a later one that
// reuses the pid.
func startTime(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", false
	}
	fields := bytes.Fields(b[i+1:]) // from field 3, the state
	if len(fields) < 20 {
		return "", false
	}
	return string(fields[19]), true
}

// waitGone waits until every pid has exited, or for at most d.
func waitGone(pids []int, d time.Duration) {
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}
