// Command startup measures docs/targets.md P7: the time from `scidex serve` to a
// ready server (/readyz answers 200) on the embedded default, for the first
// start (the cluster is created) and for later starts (it is reused).
//
//	go run ./bench/startup -n 5
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
)

func main() {
	n := flag.Int("n", 5, "later starts to time")
	firsts := flag.Int("first", 3, "first starts to time (each in a fresh data dir)")
	flag.Parse()
	defer benchkit.Cleanup()
	bin := benchkit.Build(benchkit.TempDir("scidex-bench-bin-"))
	var first, later []time.Duration
	for i := 0; i < *firsts; i++ {
		tmp := benchkit.TempDir("scidex-bench-")
		dir := filepath.Join(tmp, "data")
		first = append(first, startToReady(bin, dir))
		if i == 0 {
			for j := 0; j < *n; j++ {
				later = append(later, startToReady(bin, dir))
			}
		}
		os.RemoveAll(tmp)
	}
	fmt.Printf("P7 scidex serve -> /readyz 200 on the embedded default (%s)\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("  first start (initdb + start + migrate + seed): median %s  (runs %v)  target < 10s: %s\n", median(first), first, verdict(median(first), 10*time.Second))
	fmt.Printf("  later start (reuse the cluster):               median %s  (runs %v)  target < 3s: %s\n", median(later), later, verdict(median(later), 3*time.Second))
}

// startToReady starts the server, waits until /readyz answers 200 (the time
// returned), then stops it with SIGTERM and waits for it (and its cluster) to
// exit.
func startToReady(bin, dir string) time.Duration {
	start := time.Now()
	srv := benchkit.StartServer(benchkit.ServerOpts{Bin: bin, Args: []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir},
		Env: []string{"DATABASE_URL="}})
	d := time.Since(start)
	srv.Stop()
	return d
}

func median(ds []time.Duration) time.Duration { return benchkit.Median(ds).Round(time.Millisecond) }

func verdict(d, target time.Duration) string {
	if d < target {
		return fmt.Sprintf("met (%.0f%% of the budget)", 100*float64(d)/float64(target))
	}
	return "MISSED"
}
