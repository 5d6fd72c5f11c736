package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
)

// startWithMetrics starts a second server on st's database, like the first
// but with --metrics-addr, and scrapes its /metrics every second (as often
// as Prometheus is ever set to; 15 s is its default) until the run ends.
// It returns the server's GraphQL URL and process group.
func startWithMetrics(st *benchkit.Stack) (string, int) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort())
	srv := benchkit.StartServer(benchkit.ServerOpts{Bin: st.Bin, Group: true,
		Args: []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(st.Dir, "data-metrics"), "--log-level", "info",
			"--write-rate", "0", "--metrics-addr", addr},
		Env: []string{fmt.Sprintf("DATABASE_URL=%s pool_max_conns=%d", st.Cluster.ConnString(), *pool), "SCIDEX_JWT_SECRET=" + benchkit.Secret}})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}
	}()
	benchkit.AtExit(func() { close(stop); <-done })
	fmt.Printf("  a second server with --metrics-addr %s, scraped every second\n", addr)
	return srv.URL() + "/graphql", srv.Cmd.Process.Pid
}

// reportMetrics prints the medians of the per-round ratios of the server with
// metrics on to the one without.
func reportMetrics(off, on []figures) {
	ratio := func(f func(i int) float64) float64 {
		v := make([]float64, len(on))
		for i := range v {
			v[i] = f(i)
		}
		return benchkit.Median(v)
	}
	rps := ratio(func(i int) float64 { return on[i].RPS / off[i].RPS })
	cpu := ratio(func(i int) float64 { return float64(on[i].CPU.Server) / float64(off[i].CPU.Server) })
	p99 := ratio(func(i int) float64 { return float64(on[i].P99) / float64(off[i].P99) })
	fmt.Printf("  metrics on/off, median of %d rounds: throughput %.3f, server CPU per request %.3f, p99 %.3f\n", len(on), rps, cpu, p99)
}
