package mcpserver

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exited reports whether the stdio server's process has exited, without
// reaping it (the SDK's Close does that). A server that died between calls
// is found here rather than by a call whose request might race the read of
// its end of file.
func (s *session) exited() bool {
	if s.cmd == nil || s.cmd.Process == nil {
		return false
	}
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, s.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if errors.Is(err, unix.ECHILD) {
		return true // already reaped
	}
	// With WNOHANG, a child that has not changed state leaves info zero.
	return err == nil && info.Signo != 0
}
