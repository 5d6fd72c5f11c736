package bwrap

import (
	"testing"

	"github.com/scidex/substrate/runtimes"
)

// A sandbox counts as killed when the runtime killed it (cancelled, output
// cut, wall time, naming the cap behind it) or the kernel did (the memory
// cgroup's OOM killer, SIGXCPU); a tool that exited, or failed on a cap
// without being killed, is no kill.
func TestKillReason(t *testing.T) {
	fail := func(code string) error { return runtimes.Errorf(code, false, "x") }
	for _, c := range []struct {
		name string
		why  string
		err  error
		u    usage
		want string
	}{
		{"wall time", runtimes.CodeWallTimeout, fail(runtimes.CodeWallTimeout), usage{}, "wall_timeout"},
		{"fork bomb killed at its wall time", runtimes.CodeWallTimeout, fail(runtimes.CodePidsLimit), usage{pidsMaxHit: 3}, "pids_limit"},
		{"cancelled", runtimes.CodeCancelled, fail(runtimes.CodeCancelled), usage{}, "cancelled"},
		{"output cut", runtimes.CodeOutputTooLarge, fail(runtimes.CodeOutputTooLarge), usage{}, "output_too_large"},
		{"OOM killed", "", fail(runtimes.CodeMemoryLimit), usage{oomKills: 1}, "memory_limit"},
		{"CPU time", "", fail(runtimes.CodeCPULimit), usage{}, "cpu_limit"},
		{"allocation refused by rlimit", "", fail(runtimes.CodeMemoryLimit), usage{}, ""},
		{"exited non-zero", "", fail(runtimes.CodeToolError), usage{}, ""},
		{"succeeded", "", nil, usage{}, ""},
	} {
		if got := killReason(c.why, c.err, c.u); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
