// Command prism measures docs/targets.md P1, the Prism page query (one artifact, its
// first 20 outgoing links, each target's title, type and signal summary), at 32
// concurrent clients on a dataset of 20k artifacts, 200k links and ~210k
// signals, against two references on the same database in the same run:
//
//   - PostGraphile 4.14.1 (bench/prism/postgraphile) serving the same tables
//     with the equivalent nested query, the signal summary being a computed
//     column (artifacts_signal_summary);
//   - the raw-SQL floor: pgbench running, prepared, the 3 statements our server
//     issues for the page (see floor.go).
//
// The two GraphQL servers are driven by the same Go load generator (load.go);
// the three measurements alternate over rounds so that a noisy machine hits
// all of them. Before measuring, it checks that both servers return the same
// page and counts each one's SQL statements per page (docs/targets.md P2).
//
// With -metrics, a second server on the same database, started with
// --metrics-addr and scraped every second, is measured in each round beside
// the first (metrics off): the ratio of the two is the cost of the metrics.
// With -tracing, likewise a server with tracing on (every request sampled,
// exported over OTLP/HTTP to a receiver in the bench): the cost of tracing.
//
//	go run ./bench/prism [-duration 10s -rounds 3 -clients 32 -cpuprofile bench/out/prism.prof -metrics -tracing]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
	"github.com/scidex/substrate/internal/auth"
)

var (
	duration   = flag.Duration("duration", 10*time.Second, "how long each measurement runs")
	warmup     = flag.Duration("warmup", 3*time.Second, "warm-up before each measurement")
	rounds     = flag.Int("rounds", 3, "rounds of the three measurements; medians are reported")
	clients    = flag.Int("clients", 32, "concurrent clients (load generator workers, pgbench clients)")
	pool       = flag.Int("pool", 32, "database connections of our server; PostGraphile's workers share as many")
	pgWorkers  = flag.Int("pg-workers", 2, "PostGraphile --cluster-workers (1 = a single node process)")
	serverBin  = flag.String("bin", "", "the scidex binary to measure (default: build ./cmd/scidex)")
	hold       = flag.Bool("hold", false, "after setup, print how to reach the database and servers and wait for Ctrl-C (to investigate)")
	cpuprofile = flag.String("cpuprofile", "", "write a CPU profile of our server, taken during the first round's measurement, to this file")
	metricsOn  = flag.Bool("metrics", false, "also measure, in each round, a second server with --metrics-addr (scraped every second), and report its ratio to the first")
	tracingOn  = flag.Bool("tracing", false, "also measure, in each round, a server with tracing on (always_on, OTLP/HTTP to a receiver in the bench), and report its ratio to the first")
)

// ourQuery is the Prism page as our server serves it (internal/server/prism_test.go).
const ourQuery = `query Prism($ref: Ref!) {
  artifact(ref: $ref) {
    ref title type
    links(first: 20) {
      pageInfo { hasNextPage endCursor }
      edges { node {
        predicate
        to {
          ref title type
          signals { vote { score up down count } kinds { kind dimension aggregation value count quadraticTotal } }
        }
      } }
    }
  }
}`

func main() {
	flag.Parse()
	benchkit.CleanupOnSignal()
	defer benchkit.Cleanup()
	b := setup(context.Background())
	ourBodies, pgBodies := bodies(ourBody), bodies(pgBody)
	var ours, pg, fl, withM, withT []figures
	for r := 0; r < *rounds; r++ {
		var o, p, f, om, ot figures
		runs := []func(){
			func() {
				stop := profile(b.pprofAddr, r == 0)
				o = measure("our server", b.ourURL, b.tok, ourBodies, *clients, b.ourPgid, *warmup, *duration)
				stop()
			},
			func() { p = measure("PostGraphile", b.pgURL, "", pgBodies, *clients, b.pgPgid, *warmup, *duration) },
			func() { f = floor(b.conn, b.script, *clients, *warmup, *duration) },
		}
		if b.metricsURL != "" {
			runs = append(runs, func() {
				om = measure("our server, metrics on", b.metricsURL, b.tok, ourBodies, *clients, b.metricsPgid, *warmup, *duration)
			})
		}
		if b.tracingURL != "" {
			runs = append(runs, func() {
				ot = measure("our server, tracing on", b.tracingURL, b.tok, ourBodies, *clients, b.tracingPgid, *warmup, *duration)
			})
		}
		for i := range runs { // each round starts with another of the three
			runs[(i+r)%len(runs)]()
		}
		ours, pg, fl = append(ours, o), append(pg, p), append(fl, f)
		if b.metricsURL != "" {
			withM = append(withM, om)
			fmt.Printf("  round %d: ours, metrics on %s\n    metrics on/off: throughput %.3f, server CPU per request %.3f\n",
				r+1, om, om.RPS/o.RPS, float64(om.CPU.Server)/float64(o.CPU.Server))
		}
		if b.tracingURL != "" {
			withT = append(withT, ot)
			fmt.Printf("  round %d: ours, tracing on %s\n    tracing on/off: throughput %.3f, server CPU per request %.3f\n",
				r+1, ot, ot.RPS/o.RPS, float64(ot.CPU.Server)/float64(o.CPU.Server))
		}
		fmt.Printf("  round %d:\n    ours         %s\n    PostGraphile %s\n    floor        %s\n    ours/PostGraphile %.2f×, ours/floor %.0f%%, p99 ours/PostGraphile %.2f\n",
			r+1, o, p, f, o.RPS/p.RPS, 100*o.RPS/f.RPS, float64(o.P99)/float64(p.P99))
		if o.CPU.Noisy() || p.CPU.Noisy() || f.CPU.Noisy() {
			fmt.Println("    NOTE: other processes took more than 10% of the CPU in this round: its figures are noisy")
		}
	}
	report(ours, pg, fl)
	if len(withM) > 0 {
		reportMetrics(ours, withM)
	}
	if len(withT) > 0 {
		var pages int64
		for _, f := range withT {
			pages += int64(f.N)
		}
		reportTracing(ours, withT, pages)
	}
}

// bench is what the measurements run against.
type bench struct {
	conn, script                  string // the database; the floor's pgbench script
	ourURL, tok, pprofAddr, pgURL string
	ourPgid, pgPgid               int // process groups, for CPU accounting
	// metricsURL is the second server's, with metrics on (-metrics).
	metricsURL  string
	metricsPgid int
	// tracingURL is the server's with tracing on (-tracing).
	tracingURL  string
	tracingPgid int
}

// setup starts a private cluster, our server (which migrates it), seeds the
// dataset, starts PostGraphile, and checks both servers before measuring.
func setup(ctx context.Context) *bench {
	root := benchkit.ModuleRoot()
	fmt.Printf("P1 Prism page, %d clients, %s per measurement after %s warm-up, %d rounds (%s)\n",
		*clients, *duration, *warmup, *rounds, time.Now().UTC().Format(time.RFC3339))
	b := &bench{}
	flags := []string{"--write-rate", "0"}
	if *cpuprofile != "" {
		b.pprofAddr = fmt.Sprintf("127.0.0.1:%d", freePort())
		flags = append(flags, "--pprof-addr", b.pprofAddr)
	}
	// The server migrates the database; it runs in a process group of its own
	// for the CPU accounting.
	st := benchkit.Start(benchkit.StackOpts{Prefix: "scidex-bench-prism-", Bin: *serverBin, Pool: *pool, Flags: flags, Group: true,
		Settings: map[string]string{"max_connections": "200", "shared_buffers": "512MB", "shared_preload_libraries": "pg_stat_statements"}})
	tempDir, pgDataDir, b.conn = st.Dir, st.PGData(), st.Cluster.ConnString()
	b.ourURL, b.ourPgid = st.GraphQL(), st.Server.Cmd.Process.Pid
	if *metricsOn {
		b.metricsURL, b.metricsPgid = startWithMetrics(st)
	}
	if *tracingOn {
		b.tracingURL, b.tracingPgid = startWithTracing(st)
	}
	benchkit.Check(seed(ctx, b.conn))
	// pg_stat_statements counts statements only while statementsPerPage asks it to.
	benchkit.ExecSQL(ctx, b.conn, `CREATE SCHEMA IF NOT EXISTS prism; CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA prism`)
	benchkit.ExecSQL(ctx, b.conn, `ALTER SYSTEM SET pg_stat_statements.track = 'none'`)
	benchkit.ExecSQL(ctx, b.conn, `SELECT pg_reload_conf()`)
	b.tok = benchkit.Token("bench", auth.PermViewer)
	pgPool := max(1, *pool / *pgWorkers)
	b.pgURL, b.pgPgid = startPostGraphile(ctx, root, b.conn, *pgWorkers, pgPool)
	fmt.Printf("  PostGraphile 4.14.1: %d cluster worker(s), pool %d each; our server: pool %d\n", *pgWorkers, pgPool, *pool)

	compareServers(b.ourURL, b.tok, b.pgURL)
	statementsPerPage(ctx, b.conn, "our server", b.ourURL, b.tok, ourBody)
	statementsPerPage(ctx, b.conn, "PostGraphile", b.pgURL, "", pgBody)
	b.script = floorScript(root)
	if *hold {
		fmt.Printf("  holding: psql %s\n  our server %s (token %s)\n  PostGraphile %s\n  floor script:\n%s\n",
			strings.Join(benchkit.ConnArgs(b.conn), " "), b.ourURL, b.tok, b.pgURL, b.script)
		select {}
	}
	return b
}

func (f figures) String() string {
	return fmt.Sprintf("%5.0f/s  p50 %8s  p99 %8s   CPU per request: server %s, postgres %s, client %s, other %s; machine %.0f%% busy",
		f.RPS, ms(f.P50), ms(f.P99), ms(f.CPU.Server), ms(f.CPU.DB), ms(f.CPU.Client), ms(f.CPU.Other), 100*f.CPU.Busy)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }

// report prints the medians of each figure and of the per-round ratios against
// the targets.
func report(ours, pg, fl []figures) {
	med := func(xs []figures, f func(figures) float64) float64 {
		v := make([]float64, len(xs))
		for i, x := range xs {
			v[i] = f(x)
		}
		return benchkit.Median(v)
	}
	rps := func(x figures) float64 { return x.RPS }
	p50 := func(x figures) float64 { return float64(x.P50) / 1e6 }
	p99 := func(x figures) float64 { return float64(x.P99) / 1e6 }
	ratio := func(f func(i int) float64) float64 {
		v := make([]float64, len(ours))
		for i := range v {
			v[i] = f(i)
		}
		return benchkit.Median(v)
	}
	vsPG := ratio(func(i int) float64 { return ours[i].RPS / pg[i].RPS })
	vsFloor := ratio(func(i int) float64 { return ours[i].RPS / fl[i].RPS })
	p99Ratio := ratio(func(i int) float64 { return float64(ours[i].P99) / float64(pg[i].P99) })
	fmt.Printf("  medians: ours %.0f/s (p50 %.1f ms, p99 %.1f ms) | PostGraphile %.0f/s (p50 %.1f ms, p99 %.1f ms) | floor %.0f/s (p50 %.1f ms, p99 %.1f ms)\n",
		med(ours, rps), med(ours, p50), med(ours, p99), med(pg, rps), med(pg, p50), med(pg, p99), med(fl, rps), med(fl, p50), med(fl, p99))
	// On a shared machine, other processes take a share of the cores that
	// depends on how many runnable threads each measurement has (pgbench's 32
	// backends win more of it than one Go process): the CPU each request costs
	// is the steadier figure, and cores / CPU per request the capacity.
	cost := func(x figures) float64 { return float64(x.CPU.Server+x.CPU.DB+x.CPU.Client) / 1e6 }
	cOurs, cPG, cFloor := med(ours, cost), med(pg, cost), med(fl, cost)
	fmt.Printf("  CPU per request (server + postgres + client), median: ours %.1f ms, PostGraphile %.1f ms, floor %.1f ms;\n"+
		"    capacity on a quiet machine (cores / CPU per request): ours/PostGraphile %.2f×, ours/floor %.0f%%\n",
		cOurs, cPG, cFloor, cPG/cOurs, 100*cFloor/cOurs)
	fmt.Printf("  ours/PostGraphile: median %.2f× (target >= 2.5×: %s)\n", vsPG, benchkit.Verdict(vsPG >= 2.5))
	fmt.Printf("  ours/floor:        median %.0f%% (target >= 65%%: %s)\n", 100*vsFloor, benchkit.Verdict(vsFloor >= 0.65))
	fmt.Printf("  p99 ours/PostGraphile: median %.2f (target <= 0.5: %s)\n", p99Ratio, benchkit.Verdict(p99Ratio <= 0.5))
}

// profile fetches an 8-second CPU profile of our server once the warm-up is
// over, when on; the returned function waits for it.
func profile(addr string, on bool) func() {
	if addr == "" || !on {
		return func() {}
	}
	secs := min(8, max(1, int((*duration).Seconds())-1))
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(*warmup + 500*time.Millisecond)
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs))
		benchkit.Check(err)
		defer resp.Body.Close()
		benchkit.Check(os.MkdirAll(filepath.Dir(*cpuprofile), 0o755))
		f, err := os.Create(*cpuprofile)
		benchkit.Check(err)
		defer f.Close()
		_, err = io.Copy(f, resp.Body)
		benchkit.Check(err)
	}()
	return func() {
		<-done
		fmt.Printf("  CPU profile of our server (%d s of round 1): %s  (go tool pprof -top -cum %s)\n", secs, *cpuprofile, *cpuprofile)
	}
}
