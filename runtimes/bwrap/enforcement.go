package bwrap

// enforcement says how this server enforces each cap of a sandbox: by a
// cgroup v1 controller when one is usable, by an rlimit set on the sandbox
// before the tool starts when not. A call's error details carry it, so a
// caller can tell a cgroup's cap from the weaker rlimit's.
type enforcement struct {
	Memory string `json:"memory"` // cgroup (memory.limit_in_bytes) or rlimit (RLIMIT_AS)
	Pids   string `json:"pids"`   // cgroup (pids.max) or rlimit (RLIMIT_NPROC)
	CPU    string `json:"cpu"`    // cgroup (cpu.cfs_quota_us) or rlimit (RLIMIT_CPU)
	Disk   string `json:"disk"`   // tmpfs size (/tmp, /work, /dev/shm; the rest read-only)
	Wall   string `json:"wall"`   // watchdog killing the pid namespace
	// Network is how a networked tool reaches out: egress_proxy (the
	// guarded proxy, its only way), or off (no shim: no tool gets it).
	Network string `json:"network"`
}

const (
	byCgroup = "cgroup"
	byRlimit = "rlimit"
)

func (b *bwrapBackend) enforcement() enforcement {
	e := enforcement{Memory: byRlimit, Pids: byRlimit, CPU: byRlimit, Disk: "tmpfs", Wall: "watchdog", Network: "off"}
	if b.shim != "" {
		e.Network = "egress_proxy"
	}
	if b.cg.has("memory") {
		e.Memory = byCgroup
	}
	if b.cg.has("pids") {
		e.Pids = byCgroup
	}
	if b.cg.has("cpu") {
		e.CPU = byCgroup
	}
	return e
}

// rlimits are the limits that stand in for the controllers that are missing.
func (e enforcement) rlimits(s *Sandbox, pids int) rlimitSet {
	var r rlimitSet
	if e.Memory == byRlimit {
		r.as = uint64(s.Caps.MemoryBytes)
	}
	if e.Pids == byRlimit {
		r.nproc = uint64(pids)
	}
	if e.CPU == byRlimit {
		r.cpu = cpuSeconds(s.Caps.WallTime.Seconds(), s.Caps.CPUCount)
	}
	return r
}

func (e enforcement) details() map[string]any {
	return map[string]any{"memory": e.Memory, "pids": e.Pids, "cpu": e.CPU, "disk": e.Disk, "wall": e.Wall, "network": e.Network}
}
