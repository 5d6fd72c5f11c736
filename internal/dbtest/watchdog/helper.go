package watchdog

import (
	"bufio"
	"io"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// serve is the watchdog process: it collects the directories and processes
// its parent hands it until the pipe ends (the parent closed it or died), then
// kills the processes and cleans the directories. It returns the exit status.
func serve(in io.Reader) int {
	signalsIgnored()
	var dirs []string
	procs := map[string]bool{} // "pid starttime"
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		verb, arg, _ := strings.Cut(sc.Text(), " ")
		switch verb {
		case "dir", "forget-dir":
			d, err := strconv.Unquote(arg)
			if err != nil {
				continue
			}
			dirs = without(dirs, d)
			if verb == "dir" {
				dirs = append(dirs, d)
			}
		case "proc":
			procs[arg] = true
		case "forget-proc":
			delete(procs, arg)
		}
	}
	// The servers first, so that none is still using a cluster when it stops.
	var killed []int
	for p := range procs {
		pidText, st, _ := strings.Cut(p, " ")
		pid, err := strconv.Atoi(pidText)
		if err != nil {
			continue
		}
		if now, ok := startTime(pid); ok && now == st {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, pid)
		}
	}
	waitGone(killed, 5*time.Second)
	status := 0
	for i := len(dirs) - 1; i >= 0; i-- { // newest first, as t.Cleanup would
		if err := clean(dirs[i]); err != nil {
			status = 1
		}
	}
	return status
}

// signalsIgnored keeps the watchdog alive through the signals that end the
// tests (a Ctrl-C reaches the whole process group; a supervisor may send
// SIGTERM or SIGHUP to it): it has its cleanup to do once its parent is gone.
func signalsIgnored() {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
}

func without(list []string, s string) []string {
	out := list[:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
