package bwrap

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroups are the cgroup v1 controllers this server can use to cap a call:
// for each, the directory under the server's own cgroup in which each call
// gets a child (so the server's own limits still bound the sum of its
// calls). cgroup v2 is used by no code here: on the machines this runs on it
// has no controllers delegated, and the v1 hierarchies carry memory, pids
// and cpu.
type cgroups struct {
	base map[string]string // controller → <mount>/<server's cgroup>/scidex-bwrap
}

// controllers are those used: memory and pids caps, the CPU quota, and CPU
// accounting for the result's CPU time.
var controllers = []string{"memory", "pids", "cpu", "cpuacct"}

// detectCgroups finds the server's cgroup in each v1 hierarchy and checks
// that a child can be made there. A controller that is not mounted or not
// writable is left out, and its cap falls back to an rlimit.
func detectCgroups() *cgroups {
	mounts := v1Mounts()
	self := selfCgroups()
	c := &cgroups{base: map[string]string{}}
	for _, ctl := range controllers {
		m, ok := mounts[ctl]
		if !ok {
			continue
		}
		p, ok := self[ctl]
		if !ok {
			continue
		}
		rel, err := filepath.Rel(m.root, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = "."
		}
		base := filepath.Join(m.point, rel, "scidex-bwrap")
		if err := os.MkdirAll(base, 0o755); err != nil {
			continue
		}
		probe := filepath.Join(base, fmt.Sprintf("probe-%d", os.Getpid()))
		if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			continue
		}
		_ = os.Remove(probe)
		c.base[ctl] = base
	}
	return c
}

type mount struct{ point, root string }

// v1Mounts reads /proc/self/mountinfo for the cgroup v1 hierarchies, by
// controller.
func v1Mounts() map[string]mount {
	out := map[string]mount{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(tail) < 3 || tail[0] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(tail[2], ",") {
			out[opt] = mount{point: fields[4], root: fields[3]}
		}
	}
	return out
}

// selfCgroups reads /proc/self/cgroup: the server's cgroup path by
// controller.
func selfCgroups() map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || parts[1] == "" {
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			out[ctl] = parts[2]
		}
	}
	return out
}

// has reports whether a controller is usable.
func (c *cgroups) has(ctl string) bool {
	if c == nil {
		return false
	}
	_, ok := c.base[ctl]
	return ok
}

// limits are what one call's cgroup is set to.
type limits struct {
	memory int64
	pids   int
	cpus   float64
}

// runGroup is one call's cgroup in each usable controller.
type runGroup struct {
	dirs map[string]string
}

// create makes the call's cgroups and sets its limits.
func (c *cgroups) create(name string, l limits) (*runGroup, error) {
	g := &runGroup{dirs: map[string]string{}}
	for ctl, base := range c.base {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			g.destroy()
			return nil, fmt.Errorf("create %s cgroup: %w", ctl, err)
		}
		g.dirs[ctl] = d
	}
	set := func(ctl, file, value string) error {
		d, ok := g.dirs[ctl]
		if !ok {
			return nil
		}
		if err := os.WriteFile(filepath.Join(d, file), []byte(value), 0); err != nil {
			return fmt.Errorf("set %s.%s: %w", ctl, file, err)
		}
		return nil
	}
	mem := strconv.FormatInt(l.memory, 10)
	errs := []error{set("memory", "memory.limit_in_bytes", mem), set("pids", "pids.max", strconv.Itoa(l.pids))}
	if d, ok := g.dirs["memory"]; ok && exists(filepath.Join(d, "memory.memsw.limit_in_bytes")) {
		// Memory and swap together at the same cap: a tool cannot page its
		// way past it.
		errs = append(errs, set("memory", "memory.memsw.limit_in_bytes", mem))
	}
	if l.cpus > 0 {
		const period = 100000
		errs = append(errs, set("cpu", "cpu.cfs_period_us", strconv.Itoa(period)),
			set("cpu", "cpu.cfs_quota_us", strconv.Itoa(int(l.cpus*period))))
	}
	if err := errors.Join(errs...); err != nil {
		g.destroy()
		return nil, err
	}
	return g, nil
}

// add moves a process into every controller of the group.
func (g *runGroup) add(pid int) error {
	for ctl, d := range g.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("join %s cgroup: %w", ctl, err)
		}
	}
	return nil
}

// usage is what a finished call's cgroups recorded.
type usage struct {
	peakMemory int64
	oomKills   int64
	memFailcnt int64
	pidsMaxHit int64
	cpuTime    time.Duration
	throttled  int64
	measured   bool
}

func (g *runGroup) usage() usage {
	var u usage
	if d, ok := g.dirs["memory"]; ok {
		u.measured = true
		u.peakMemory = readInt(filepath.Join(d, "memory.max_usage_in_bytes"))
		u.memFailcnt = readInt(filepath.Join(d, "memory.failcnt"))
		u.oomKills = readKey(filepath.Join(d, "memory.oom_control"), "oom_kill")
	}
	if d, ok := g.dirs["pids"]; ok {
		u.pidsMaxHit = readKey(filepath.Join(d, "pids.events"), "max")
	}
	if d, ok := g.dirs["cpuacct"]; ok {
		u.cpuTime = time.Duration(readInt(filepath.Join(d, "cpuacct.usage")))
	}
	if d, ok := g.dirs["cpu"]; ok {
		u.throttled = readKey(filepath.Join(d, "cpu.stat"), "nr_throttled")
	}
	return u
}

// destroy kills whatever is left in the group and removes it. The pid
// namespace has normally taken every process with it already; this is the
// second line, for a process that escaped it. Waiting for the group to empty
// is bounded: a cgroup that will not go is logged by the caller and left.
func (g *runGroup) destroy() error {
	deadline := time.Now().Add(5 * time.Second)
	var errs []error
	for ctl, d := range g.dirs {
		for {
			pids := readPids(filepath.Join(d, "cgroup.procs"))
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			err := os.Remove(d)
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("remove %s cgroup: %w", ctl, err))
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

func readInt(p string) int64 {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// readKey reads "key value" from a flat-keyed cgroup file.
func readKey(p, key string) int64 {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

func readPids(p string) []int {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
