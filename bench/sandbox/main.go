// Command sandbox measures TARGETS.md P6: the bwrap runtime running a
// trivial tool (a sh script that echoes its JSON arguments) against the same
// script run bare (exec'd by the same process, no sandbox), in the same run:
// the sandbox's p50 overhead and the sandboxed calls per second the machine
// sustains with several calls at once.
//
//	go run ./bench/sandbox -n 300 -d 10s
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
)

const script = "#!/bin/sh\nexec cat\n"

const args = `{"value": {"n": 42, "s": "a small argument"}}`

func main() {
	n := flag.Int("n", 300, "sequential calls of each kind for the latency figures")
	d := flag.Duration("d", 10*time.Second, "duration of each throughput run")
	conc := flag.String("c", "1,2,4,8", "concurrencies of the throughput runs")
	flag.Parse()
	defer benchkit.Cleanup()

	dir := benchkit.TempDir("scidex-bench-sandbox-")
	prog := filepath.Join(dir, "run.sh")
	benchkit.Check(os.WriteFile(prog, []byte(script), 0o755))

	rt, err := bwrap.New(bwrap.Options{CacheDir: filepath.Join(dir, "cache")})
	benchkit.Check(err)
	tool := trivialTool()
	ctx := context.Background()
	// The first call materializes the bundle: not part of any figure.
	_, err = sandboxed(ctx, rt, tool)
	benchkit.Check(err)

	// Latency: bare and sandboxed calls alternate, so both see the same
	// machine at the same moments.
	var bare, boxed, diff []time.Duration
	for i := 0; i < *n; i++ {
		b, err := runBare(prog)
		benchkit.Check(err)
		s, err := sandboxed(ctx, rt, tool)
		benchkit.Check(err)
		bare, boxed, diff = append(bare, b), append(boxed, s), append(diff, s-b)
	}
	fmt.Printf("P6 bwrap runtime, trivial tool (sh: exec cat) vs the same script run bare (%s, %d cores, bwrap %s)\n",
		time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), bwrapVersion())
	fmt.Printf("  enforcement: %v\n", rt.Enforcement())
	fmt.Printf("  latency over %d alternating calls: bare p50 %s p99 %s; sandboxed p50 %s p99 %s\n",
		*n, pct(bare, 50), pct(bare, 99), pct(boxed, 50), pct(boxed, 99))
	o := pct(diff, 50)
	fmt.Printf("  sandbox overhead p50 %s (p90 %s)  target < 30ms: %s\n", o, pct(diff, 90), benchkit.Verdict(o < 30*time.Millisecond))

	for _, c := range strings.Split(*conc, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(c))
		benchkit.Check(err)
		bareRate := throughput(k, *d, func() error { _, err := runBare(prog); return err })
		boxRate := throughput(k, *d, func() error { _, err := sandboxed(ctx, rt, tool); return err })
		fmt.Printf("  concurrency %d: sandboxed %.1f calls/s, bare %.1f calls/s (%.0f%%)  target >= 20/s: %s\n",
			k, boxRate, bareRate, 100*boxRate/bareRate, benchkit.Verdict(boxRate >= 20))
	}
}

func trivialTool() *runtimes.Tool {
	sum := sha256.Sum256([]byte(script))
	f := runtimes.File{Path: "run.sh", SHA256: hex.EncodeToString(sum[:])}
	return &runtimes.Tool{Ref: "tool:bench-echo@1.0.0", Name: "bench-echo", Version: "1.0.0", Runtime: bwrap.Name,
		Config: json.RawMessage(`{"command":["run.sh"]}`), Files: []runtimes.File{f}, Bundle: memBundle{},
		Caps: runtimes.Caps{WallTime: 30 * time.Second, MemoryBytes: 256 << 20, Network: "deny"}}
}

type memBundle struct{}

func (memBundle) Open(context.Context, runtimes.File) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(script)), nil
}

func sandboxed(ctx context.Context, rt *bwrap.Runtime, tool *runtimes.Tool) (time.Duration, error) {
	start := time.Now()
	res, err := rt.Run(ctx, &runtimes.Call{Tool: tool, Args: json.RawMessage(args), ID: "bench"})
	if err != nil {
		return 0, err
	}
	if !bytes.Equal(bytes.TrimSpace(res.Output), []byte(args)) {
		return 0, fmt.Errorf("sandboxed output %s", res.Output)
	}
	return time.Since(start), nil
}

// runBare runs the script as the runtime would, stdin in and stdout out,
// without bwrap.
func runBare(prog string) (time.Duration, error) {
	start := time.Now()
	cmd := exec.Command(prog)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader(args)
	out, err := cmd.Output()
	if err != nil {
		return 0, err
	}
	if !bytes.Equal(bytes.TrimSpace(out), []byte(args)) {
		return 0, fmt.Errorf("bare output %s", out)
	}
	return time.Since(start), nil
}

// throughput runs f from k goroutines for d and returns calls per second.
func throughput(k int, d time.Duration, f func() error) float64 {
	var done atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	start := time.Now()
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				benchkit.Check(f())
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(start).Seconds()
}

// pct is the p-th percentile of ds, at index (len-1)*p/100, rounded to 10 µs:
// the way the P6 figures of bench/RESULTS.md were taken.
func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s) - 1) * p / 100
	return s[i].Round(10 * time.Microsecond)
}

func bwrapVersion() string {
	out, err := exec.Command("bwrap", "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap ")
}
