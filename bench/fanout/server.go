package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
)

// server is one running `scidex serve` on the embedded PostgreSQL, or the
// fan-out floor.
type server struct {
	*benchkit.Server        // Addr is the host:port of /graphql
	pprof            string // host:port of net/http/pprof
	metrics          string // host:port of Prometheus /metrics, when on
	floor            bool
}

// create writes (or, on the floor, publishes) the hypothesis with this id.
func (s *server) create(token, id string) error {
	if s.floor {
		return floorCreate(s.Addr, id)
	}
	return create(s.Addr, token, id)
}

// raiseFileLimit lifts RLIMIT_NOFILE as far as the process may (the server
// started later inherits it): 10,000 subscribers are 10,000 sockets on each side.
func raiseFileLimit(want uint64) uint64 {
	var lim syscall.Rlimit
	benchkit.Check(syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	if lim.Max < want {
		// Only root may raise the hard limit; otherwise keep what we have.
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: want, Max: want}); err == nil {
			return want
		}
	}
	lim.Cur = lim.Max
	benchkit.Check(syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	return lim.Cur
}

// startServer runs the binary with production defaults (write rate limit
// included) plus pprof on a free loopback port, and waits for /readyz. With
// metrics, Prometheus metrics are on too: the hub's subscriber count tells when
// subscribers that no probe reaches are live.
func startServer(bin, dataDir string, metrics bool) *server {
	pp := freePort()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--pprof-addr", pp, "--log-level", "info"}
	mp := ""
	if metrics {
		mp = freePort()
		args = append(args, "--metrics-addr", mp)
	}
	if *subBuffer > 0 {
		args = append(args, "--subscriber-buffer", fmt.Sprint(*subBuffer))
	}
	s := launch(bin, args, []string{"DATABASE_URL=", "SCIDEX_JWT_SECRET=" + benchkit.Secret})
	s.pprof, s.metrics = pp, mp
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get("http://" + pp + "/debug/pprof/")
		if err == nil {
			resp.Body.Close()
			return s
		}
		if time.Now().After(deadline) {
			s.Stop()
			benchkit.Fail(fmt.Errorf("pprof on %s: %w", pp, err))
		}
	}
}

// launch starts a server process and waits until it is ready
// (benchkit.StartServer).
func launch(bin string, args, env []string) *server {
	return &server{Server: benchkit.StartServer(benchkit.ServerOpts{Bin: bin, Args: args, Env: env})}
}

// freePort finds a free port below the ephemeral range (32768 and up on
// Linux): a port from that range can be taken by one of the thousands of
// client connections between this check and the server's bind.
func freePort() string {
	for range 1000 {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000)))
		if err == nil {
			defer l.Close()
			return l.Addr().String()
		}
	}
	benchkit.Fail(fmt.Errorf("no free port for pprof"))
	return ""
}

// mem is the server process's memory and goroutines at one moment.
type mem struct {
	rss        int64 // VmRSS, bytes
	heapInuse  int64 // runtime.MemStats.HeapInuse after a forced GC
	stackInuse int64 // runtime.MemStats.StackInuse
	goroutines int64
	// The rest of what RSS holds beyond the heap's and stacks' spans in use:
	// free heap spans not yet returned to the OS (HeapIdle - HeapReleased),
	// the GC's metadata (GCSys), span structures (MSpanInuse), other runtime
	// memory (OtherSys).
	heapFree, gcSys, mspan, otherSys int64
	totalAlloc                       int64 // every byte allocated so far
}

var (
	heapInuseRE = regexp.MustCompile(`(?m)^# HeapInuse = (\d+)`)
	stackRE     = regexp.MustCompile(`(?m)^# Stack = (\d+) /`)
	goroutineRE = regexp.MustCompile(`goroutine profile: total (\d+)`)
	heapIdleRE  = regexp.MustCompile(`(?m)^# HeapIdle = (\d+)`)
	releasedRE  = regexp.MustCompile(`(?m)^# HeapReleased = (\d+)`)
	gcSysRE     = regexp.MustCompile(`(?m)^# GCSys = (\d+)`)
	mspanRE     = regexp.MustCompile(`(?m)^# MSpan = (\d+) /`)
	otherSysRE  = regexp.MustCompile(`(?m)^# OtherSys = (\d+)`)
	totalRE     = regexp.MustCompile(`(?m)^# TotalAlloc = (\d+)`)
)

// memory forces a GC in the server (the heap profile with gc=1 runs one
// first), then reads the runtime's figures and the kernel's RSS.
func (s *server) memory() mem {
	heap := s.pprofGet("/debug/pprof/heap?gc=1&debug=1")
	var m mem
	m.heapInuse = atoiMatch(heapInuseRE, heap)
	m.stackInuse = atoiMatch(stackRE, heap)
	m.heapFree = atoiMatch(heapIdleRE, heap) - atoiMatch(releasedRE, heap)
	m.gcSys, m.mspan, m.otherSys = atoiMatch(gcSysRE, heap), atoiMatch(mspanRE, heap), atoiMatch(otherSysRE, heap)
	m.totalAlloc = atoiMatch(totalRE, heap)
	m.goroutines = atoiMatch(goroutineRE, s.pprofGet("/debug/pprof/goroutine?debug=1"))
	m.rss = procStatusKB(s.Cmd.Process.Pid, "VmRSS") * 1024
	return m
}

func (s *server) pprofGet(path string) []byte {
	resp, err := http.Get("http://" + s.pprof + path)
	benchkit.Check(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	benchkit.Check(err)
	if resp.StatusCode != http.StatusOK {
		benchkit.Fail(fmt.Errorf("pprof %s: %s", path, resp.Status))
	}
	return b
}

// saveProfile writes a pprof profile of the server to path.
func (s *server) saveProfile(path, query string) {
	benchkit.Check(os.WriteFile(path, s.pprofGet(query), 0o644))
}

func atoiMatch(re *regexp.Regexp, b []byte) int64 {
	m := re.FindSubmatch(b)
	if m == nil {
		benchkit.Fail(fmt.Errorf("no %s in pprof output", re))
	}
	v, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return v
}

func procStatusKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	benchkit.Check(err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	benchkit.Fail(fmt.Errorf("no %s in /proc/%d/status", field, pid))
	return 0
}

// cpuTicks are cumulative CPU times in clock ticks (USER_HZ, 100 per second).
type cpuTicks struct {
	server  int64 // the scidex process: utime + stime
	db      int64 // its descendants: the embedded PostgreSQL
	machine int64 // every core, busy (not idle or iowait)
	total   int64 // every core, all states
}

func (s *server) cpu() cpuTicks {
	var t cpuTicks
	procs := map[int][2]int64{} // pid -> ppid, utime+stime
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if ppid, ticks, ok := procStat(d); ok {
			procs[pid] = [2]int64{ppid, ticks}
		}
	}
	root := s.Cmd.Process.Pid
	t.server = procs[root][1]
	for pid, p := range procs {
		for a := p[0]; a > 1; a = procs[int(a)][0] {
			if int(a) == root {
				t.db += procs[pid][1]
				break
			}
		}
	}
	b, err := os.ReadFile("/proc/stat")
	benchkit.Check(err)
	line, _, _ := strings.Cut(string(b), "\n")
	for i, v := range strings.Fields(line)[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		t.total += n
		if i != 3 && i != 4 { // idle, iowait
			t.machine += n
		}
	}
	return t
}

// procStat reads a process's parent and its CPU time so far.
func procStat(path string) (ppid, ticks int64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false // it exited
	}
	// The command name may hold spaces; fields are counted after its ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ppid, _ = strconv.ParseInt(f[1], 10, 64)
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return ppid, ut + st, true
}

// clientCPU is this process's CPU time (the subscribers and the publishers).
func clientCPU() time.Duration {
	var ru syscall.Rusage
	benchkit.Check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cpus() int { return runtime.NumCPU() }

var subscribersRE = regexp.MustCompile(`(?m)^scidex_event_subscribers (\S+)`)

// subscribers is how many live subscriptions the server has registered: the
// hub's count from /metrics, the floor's from /subscribers. A scrape that
// fails (the metrics of a loaded server time out their queries) says -1.
func (s *server) subscribers() int64 {
	url := "http://" + s.metrics + "/metrics"
	if s.floor {
		url = "http://" + s.Addr + "/subscribers"
	}
	resp, err := http.Get(url)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return -1
	}
	v := strings.TrimSpace(string(b))
	if !s.floor {
		m := subscribersRE.FindSubmatch(b)
		if m == nil {
			return -1
		}
		v = string(m[1])
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return -1
	}
	return int64(n)
}

// awaitSubscribers waits until the server has n live subscriptions.
func awaitSubscribers(s *server, n int) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got := s.subscribers()
		if got >= int64(n) {
			return
		}
		if time.Now().After(deadline) {
			benchkit.Fail(fmt.Errorf("only %d of %d subscriptions registered within 2 minutes", got, n))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
