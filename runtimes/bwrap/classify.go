package bwrap

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/scidex/substrate/runtimes"
)

// classify turns how a sandbox ended into the call's result or its *Error.
// The order matters: what the runtime did (cancel, cut the output) first,
// then a cap the kernel reports as hit (it explains the tool's failure, be
// it a death, a non-zero exit, no output or the watchdog's kill), then the watchdog, then bwrap's own failure,
// then the tool's exit status.
func (r *run) classify(why string, waitErr error, u usage, e enforcement) (*runtimes.Result, error) {
	s := r.s
	stderr := r.stderr.String()
	fail := func(err *runtimes.Error) error {
		err.With("enforcement", e.details())
		if u.peakMemory > 0 {
			err.With("peak_memory_bytes", u.peakMemory)
		}
		if u.cpuTime > 0 {
			err.With("cpu_time_ms", u.cpuTime.Milliseconds())
		}
		if r.exitCode != nil {
			err.With("exit_code", *r.exitCode)
		}
		if stderr != "" && !err.Setup {
			err.With("stderr", stderr)
		}
		if r.proxy != nil {
			if refused := r.proxy.Refusals(); len(refused) > 0 {
				err.With("egress_refused", refused)
			}
		}
		return err
	}
	exit := -1
	if r.exitCode != nil {
		exit = *r.exitCode
	}
	switch {
	case why == runtimes.CodeOutputTooLarge:
		err := runtimes.AsError(r.stdoutErr)
		return nil, fail(err)
	case why == runtimes.CodeCancelled:
		return nil, fail(runtimes.Errorf(runtimes.CodeCancelled, false, "the call was cancelled; its sandbox was killed"))
	case u.oomKills > 0 || (e.Memory == byRlimit && exit > 0 && outOfMemory(stderr)):
		return nil, fail(runtimes.Errorf(runtimes.CodeMemoryLimit, false,
			"the tool used more than its memory cap of %s and was killed", bytesText(s.Caps.MemoryBytes)).
			With("memory_limit_bytes", s.Caps.MemoryBytes).With("memory_failcnt", u.memFailcnt))
	case u.pidsMaxHit > 0 && (why == runtimes.CodeWallTimeout || exit != 0 || !json.Valid(r.stdout)):
		err := runtimes.Errorf(runtimes.CodePidsLimit, false,
			"the tool tried to run more than %d processes at once and was refused (%d forks failed)", r.b.o.Pids, u.pidsMaxHit).
			With("pids_limit", r.b.o.Pids)
		if why == runtimes.CodeWallTimeout {
			err.Message += "; it was killed at its wall time of " + s.Caps.WallTime.String()
		}
		return nil, fail(err)
	case why == runtimes.CodeWallTimeout:
		return nil, fail(runtimes.Errorf(runtimes.CodeWallTimeout, false,
			"the tool did not finish within its wall time of %s; its sandbox was killed", s.Caps.WallTime))
	case why == "setup" || r.exitCode == nil:
		// bwrap writes exit-code only once the tool's program has been
		// executed: without it the sandbox never came up (a mount, the
		// namespaces, the exec itself). Its message can name host paths,
		// so it goes to the log and the caller gets the fact.
		r.b.o.Logger.Error("bwrap: sandbox setup failed", "call", s.ID, "wait", fmt.Sprint(waitErr), "note", r.setupNote, "stderr", stderr)
		return nil, fail(runtimes.Errorf(runtimes.CodeSetupFailed, true, "the sandbox did not start (the server's log has bwrap's reason)"))
	case exit == 128+int(syscall.SIGXCPU):
		return nil, fail(runtimes.Errorf(runtimes.CodeCPULimit, false, "the tool used up its CPU time and was killed"))
	case exit != 0 && strings.Contains(stderr, "No space left on device"):
		return nil, fail(runtimes.Errorf(runtimes.CodeDiskLimit, false,
			"the tool ran out of space: /tmp, /work and /dev/shm hold %s each", bytesText(r.b.o.TmpBytes)).With("tmpfs_bytes", r.b.o.TmpBytes))
	case exit != 0:
		msg := "the tool exited with status %d"
		if exit > 128 {
			msg += " (killed by signal " + syscall.Signal(exit-128).String() + ")"
		}
		return nil, fail(runtimes.Errorf(runtimes.CodeToolError, false, msg, exit))
	}
	out := r.stdout
	if !json.Valid(out) {
		return nil, fail(runtimes.Errorf(runtimes.CodeBadOutput, false, "the tool's output is not one JSON value (%d bytes on stdout)", len(out)))
	}
	return &runtimes.Result{Output: json.RawMessage(out), PeakMemoryBytes: u.peakMemory, CPUTime: u.cpuTime}, nil
}

// killReason is why the sandbox was killed, given why the run ended and how
// classify described it, or "" when it was not killed (it exited, or a cap
// refused what it asked for without killing it).
func killReason(why string, err error, u usage) string {
	code := ""
	if err != nil {
		code = runtimes.AsError(err).Code
	}
	switch {
	case why == runtimes.CodeCancelled || why == runtimes.CodeOutputTooLarge || why == runtimes.CodeWallTimeout:
		// The runtime killed it; classify names the cap behind it (pids
		// exhausted, then the wall time ran out).
		if code == runtimes.CodePidsLimit || code == runtimes.CodeMemoryLimit {
			return code
		}
		return why
	case code == runtimes.CodeMemoryLimit && u.oomKills > 0, code == runtimes.CodeCPULimit:
		return code // the kernel killed it
	}
	return ""
}

func outOfMemory(stderr string) bool {
	for _, s := range []string{"Cannot allocate memory", "out of memory", "memory exhausted"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return itoa(n>>30) + " GiB"
	case n >= 1<<20:
		return itoa(n>>20) + " MiB"
	}
	return itoa(n) + " bytes"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
