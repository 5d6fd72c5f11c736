// Command startup measures docs/targets.md P7: the time from `scidex serve` to a
// ready server (/readyz answers 200) on the embedded default, for the first
// start (the cluster is created) and for later starts (it is reused).
//
//	go run ./bench/startup -n 5
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 5, "later starts to time")
	firsts := flag.Int("first", 3, "first starts to time (each in a fresh data dir)")
	flag.Parse()
	bin, err := build()
	if err != nil {
		fail(err)
	}
	var first, later []time.Duration
	for i := 0; i < *firsts; i++ {
		dir := dataDir()
		d, err := startToReady(bin, dir)
		if err != nil {
			fail(err)
		}
		first = append(first, d)
		if i == 0 {
			for j := 0; j < *n; j++ {
				d, err := startToReady(bin, dir)
				if err != nil {
					fail(err)
				}
				later = append(later, d)
			}
		}
		os.RemoveAll(filepath.Dir(dir))
	}
	fmt.Printf("P7 scidex serve -> /readyz 200 on the embedded default (%s)\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("  first start (initdb + start + migrate + seed): median %s  (runs %v)  target < 10s: %s\n", median(first), first, verdict(median(first), 10*time.Second))
	fmt.Printf("  later start (reuse the cluster):               median %s  (runs %v)  target < 3s: %s\n", median(later), later, verdict(median(later), 3*time.Second))
}

func build() (string, error) {
	dir, err := os.MkdirTemp("", "scidex-bench-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "scidex")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/scidex").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build: %v\n%s", err, out)
	}
	return bin, nil
}

func dataDir() string {
	dir, err := os.MkdirTemp("", "scidex-bench-")
	if err != nil {
		fail(err)
	}
	_ = os.Chmod(dir, 0o755)
	return filepath.Join(dir, "data")
}

var listenRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

// startToReady starts the server, polls /readyz until 200, then stops it with
// SIGTERM and waits for it (and its cluster) to exit.
func startToReady(bin, dir string) (time.Duration, error) {
	start := time.Now()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	cmd.Env = append(os.Environ(), "DATABASE_URL=")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var a string
	select {
	case a = <-addr:
	case <-time.After(60 * time.Second):
		return 0, fmt.Errorf("no listen line within 60s")
	}
	for time.Since(start) < 60*time.Second {
		resp, err := http.Get("http://" + a + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(start), nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, fmt.Errorf("not ready within 60s")
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration{}, ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Round(time.Millisecond)
}

func verdict(d, target time.Duration) string {
	if d < target {
		return fmt.Sprintf("met (%.0f%% of the budget)", 100*float64(d)/float64(target))
	}
	return "MISSED"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "startup:", err)
	os.Exit(1)
}
