// Command fanout measures docs/targets.md P4: websocket subscription fan-out. For
// each N it starts the real server on the embedded PostgreSQL, opens N
// graphql-transport-ws subscribers (one connection, one `events` subscription
// each), measures the server's memory with no subscribers and with N idle
// ones, then publishes 100 hypotheses a second over HTTP and measures, for
// every event at every subscriber, the time from the moment its write was sent
// to the moment the subscriber read it.
//
// The subscribers and the publishers run in this process, on the same machine
// as the server and its database: their CPU competes with the server's, and
// that is part of the result.
//
//	go run ./bench/fanout -n 1000,5000,10000
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
	"github.com/scidex/substrate/internal/auth"
)

var (
	sizes      = flag.String("n", "1000,5000,10000", "comma-separated subscriber counts, one server each")
	rate       = flag.Int("rate", 100, "events published per second")
	duration   = flag.Duration("duration", 10*time.Second, "how long events are published")
	writers    = flag.Int("writers", 4, "publishing goroutines, each its own actor")
	drainWait  = flag.Duration("drain", 30*time.Second, "how long after the last write events may still arrive; later ones count as missing")
	dialConc   = flag.Int("dial-concurrency", 64, "websocket handshakes in flight at once")
	profileDir = flag.String("profile", "", "save the server's CPU (publish phase), heap and goroutine profiles here")
	binPath    = flag.String("bin", "", "use this scidex binary instead of building ./cmd/scidex (to compare two builds)")
	withFloor  = flag.Bool("floor", true, "also measure the fan-out floor (a minimal gorilla/websocket broadcaster) with the same subscribers")
	shape      = flag.String("shape", "feed", `"feed": N subscribers on one events feed (P4b); "prism": N Prism pages, each on artifactEvents of its own artifact, plus -broad subscribers on the events feed, the writes spread over the pages' artifacts (P4a)`)
	subBuffer  = flag.Int("subscriber-buffer", 0, "the server's --subscriber-buffer (0: its default, 256): how far a subscriber may fall behind before it is dropped (the floor never drops one; its publishers wait instead)")
	broadN     = flag.Int("broad", 100, "-shape prism: subscribers on the broad events feed besides the N pages")
)

// Targets of TARGETS.md P4b (the feed shape; P4a's are in result.go).
const (
	targetN        = 2000
	targetP99      = 250 * time.Millisecond
	targetPerIdleB = 30 * 1024 // P4a's, printed for the feed too
)

func main() {
	if floorServe {
		runFloorServer()
		return
	}
	flag.Parse()
	if *shape != "feed" && *shape != "prism" {
		benchkit.Fail(fmt.Errorf(`-shape: got %q, want "feed" or "prism"`, *shape))
	}
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		benchkit.Check(err)
		ns = append(ns, n)
	}
	nofile := raiseFileLimit(uint64(2*(slices.Max(ns)+*broadN) + 4096))
	defer benchkit.Cleanup()
	dir := benchkit.TempDir("scidex-bench-fanout-")
	bin := *binPath
	if bin == "" {
		bin = benchkit.Build(dir)
	}
	if *profileDir != "" {
		benchkit.Check(os.MkdirAll(*profileDir, 0o755))
	}

	fmt.Printf("P4 subscription fan-out, shape %s: %d events/s for %s, graphql-transport-ws, one subscription per connection (%s)\n",
		*shape, *rate, *duration, time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("  machine: %d cores (GOMAXPROCS %d); server, embedded PostgreSQL, subscribers and publishers all on it, in one process tree; RLIMIT_NOFILE %d\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), nofile)
	fmt.Printf("  latency: from just before the publisher sends createArtifact to the subscriber reading the event (includes the write itself)\n")
	var results, floors []result
	for _, n := range ns {
		res := measure(startServer(bin, filepath.Join(dir, "data"), *shape == "prism"), n)
		res.print("scidex")
		results = append(results, res)
		if *withFloor {
			res := measure(startFloor(), n)
			res.print("floor")
			floors = append(floors, res)
		}
	}
	if *shape == "prism" {
		printPrism(results, floors)
		return
	}
	printTable(results, floors)
}

func (r *run) idPrefix() string { return r.id }

func newRun(events int) *run {
	id := fmt.Sprintf("fanout-%x-", time.Now().UnixNano())
	return &run{id: id, start: time.Now(), sentAt: make([]atomic.Int64, events), prefix: []byte(`"ref":"hypothesis:` + id)}
}

// measure runs one server with n subscribers through the idle and the publish
// phases, and stops it.
func measure(srv *server, n int) result {
	res := result{n: n}
	defer srv.Stop()
	total := *rate * int(duration.Seconds())
	r := newRun(total)
	reader := benchkit.Token("fanout-reader", auth.PermViewer)
	var pubs []string
	for w := 0; w < *writers; w++ {
		pubs = append(pubs, benchkit.Token(fmt.Sprintf("fanout-writer-%d", w), auth.PermContributor))
	}
	probeN := 0
	nextProbe := func() int64 { probeN++; probe(srv, pubs[0], r, probeN); return int64(probeN) }

	// Warm up: a few subscribers receive a few events and leave, so that the
	// baseline has the write path, the websocket code and the pools paged in.
	g0 := srv.memory().goroutines
	feed := func(int) map[string]any { return feedQuery }
	warm, _, err := connect(srv.Addr, reader, r, 8, 8, total, feed)
	benchkit.Check(err)
	awaitLive(warm, nextProbe)
	closeAll(warm)
	for deadline := time.Now().Add(10 * time.Second); srv.memory().goroutines > g0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	res.mem0 = srv.memory()
	name := "scidex"
	if srv.floor {
		name = "floor"
	}
	if *profileDir != "" { // the base of the connections' allocations: pprof -base
		srv.saveProfile(filepath.Join(*profileDir, fmt.Sprintf("fanout-%s-heap0-%d.prof", name, n)), "/debug/pprof/heap?gc=1")
	}

	// fenced are the subscribers the probes reach: all of them on a feed, the
	// broad group in the prism shape, whose pages see only their own
	// artifact's events (they are known live from the hub's count instead).
	var subs, fenced, pages []*subscriber
	if *shape == "prism" {
		res.pages, res.broad = n, *broadN
		pages, res.connect, err = connect(srv.Addr, reader, r, n, *dialConc, total, func(i int) map[string]any { return pageQuery(r, i) })
		benchkit.Check(err)
		for i, s := range pages {
			s.expect = 0
			if i < total {
				s.expect = 1 // measured event i creates page i's artifact
			}
		}
		var took time.Duration
		fenced, took, err = connect(srv.Addr, reader, r, *broadN, *dialConc, total, feed)
		benchkit.Check(err)
		res.connect += took
		subs = append(slices.Clone(pages), fenced...)
	} else {
		subs, res.connect, err = connect(srv.Addr, reader, r, n, *dialConc, total, feed)
		benchkit.Check(err)
		fenced = subs
	}
	t0 := time.Now()
	if pages != nil {
		awaitSubscribers(srv, len(subs))
	}
	awaitLive(fenced, nextProbe)
	if reached, ok := awaitProbe(fenced, nextProbe(), 2*time.Minute); !ok {
		benchkit.Fail(fmt.Errorf("n=%d: only %d of %d subscribers received the readiness fence", n, reached, len(fenced)))
	}
	res.live = time.Since(t0)
	res.memN = srv.memory()
	if *profileDir != "" {
		srv.saveProfile(filepath.Join(*profileDir, fmt.Sprintf("fanout-%s-heap-%d.prof", name, n)), "/debug/pprof/heap?gc=1")
		srv.saveProfile(filepath.Join(*profileDir, fmt.Sprintf("fanout-%s-goroutine-%d.txt", name, n)), "/debug/pprof/goroutine?debug=1")
	}

	// Publish.
	cpu0, cc0 := srv.cpu(), clientCPU()
	profDone := make(chan struct{})
	go func() {
		defer close(profDone)
		if *profileDir != "" {
			srv.saveProfile(filepath.Join(*profileDir, fmt.Sprintf("fanout-%s-cpu-%d.prof", name, n)),
				fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(duration.Seconds())))
		}
	}()
	res.pub = publish(srv, pubs, r, *rate, total)
	pubEnd := time.Now()
	reached, ok := awaitProbe(fenced, nextProbe(), *drainWait)
	if pages != nil {
		// A page's event was dispatched before the fence; its socket may
		// still be writing it.
		awaitPages(pages, pubEnd.Add(*drainWait))
	}
	res.drain = time.Since(pubEnd)
	res.fenceReached, res.fenceOK, res.fenced = reached, ok, len(fenced)
	// CPU from the first write until every event has been delivered.
	cpu1, cc1 := srv.cpu(), clientCPU()
	<-profDone
	res.closed = closeReasons(subs)
	closeAll(subs)
	for _, s := range subs {
		for !s.closed.Load() {
			time.Sleep(time.Millisecond)
		}
	}

	res.window = float64(cpu1.total-cpu0.total) / float64(runtime.NumCPU()) / 100 // seconds
	res.serverCPU = float64(cpu1.server-cpu0.server) / 100 / res.window
	res.dbCPU = float64(cpu1.db-cpu0.db) / 100 / res.window
	res.machineCPU = float64(cpu1.machine-cpu0.machine) / 100 / res.window
	res.clientCPU = (cc1 - cc0).Seconds() / res.window
	res.collect(subs)
	if pages != nil {
		var pr, br result
		pr.collect(pages)
		br.collect(fenced)
		res.groups = []group{{"pages", pr}, {"broad", br}}
		res.n = len(subs)
	}
	return res
}

// awaitLive writes probes until every subscriber has received one, which shows
// that the server has registered its subscription.
func awaitLive(subs []*subscriber, nextProbe func() int64) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		nextProbe()
		for wait := time.Now().Add(500 * time.Millisecond); time.Now().Before(wait); time.Sleep(10 * time.Millisecond) {
			live := 0
			for _, s := range subs {
				if s.lastProbe.Load() > 0 {
					live++
				}
			}
			if live == len(subs) {
				return
			}
		}
	}
	benchkit.Fail(fmt.Errorf("not every subscriber received a probe within 2 minutes"))
}
