package bwrap

import (
	"math"
	"strconv"
)

// rlimitSet is the fallback for a cap no cgroup controller can enforce. It
// is applied by starting bwrap through util-linux prlimit(1), which lowers
// its own limits and executes bwrap, so that bwrap and everything the tool
// runs inherit them: setting them on the sandbox from outside with
// prlimit(2) would need CAP_SYS_RESOURCE, which a root server in a container
// usually lacks. Each is weaker than its cgroup: RLIMIT_AS caps each
// process's address space (not the sum of their resident memory, and a
// program that maps much more than it touches fails early), RLIMIT_NPROC
// counts every process of the sandbox uid, and RLIMIT_CPU is CPU seconds per
// process rather than a quota across cores.
type rlimitSet struct {
	as, nproc, cpu uint64 // 0: not set
}

func (r rlimitSet) empty() bool { return r == rlimitSet{} }

// args are prlimit(1)'s options for the set, a zero core size included (a
// core file is of no use to anyone and would fill the run dir).
func (r rlimitSet) args() []string {
	a := []string{"--core=0"}
	add := func(name string, v uint64) {
		if v > 0 {
			a = append(a, "--"+name+"="+strconv.FormatUint(v, 10))
		}
	}
	add("as", r.as)
	add("nproc", r.nproc)
	add("cpu", r.cpu)
	return append(a, "--")
}

// cpuSeconds is the RLIMIT_CPU fallback for a wall time and a core count: as
// much CPU as the cores could burn in the wall time, at least one second.
func cpuSeconds(wallSeconds, cpus float64) uint64 {
	if cpus <= 0 {
		cpus = 1
	}
	return uint64(math.Max(1, math.Ceil(wallSeconds*cpus)))
}
