package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
)

// figures are one measurement: throughput and latency percentiles.
type figures struct {
	RPS      float64
	P50, P99 time.Duration
	N        int
	CPU      benchkit.CPUUse
}

var client = &http.Client{Transport: &http.Transport{
	MaxIdleConns: 256, MaxIdleConnsPerHost: 256, DisableCompression: true, IdleConnTimeout: time.Minute,
}}

// validResponse checks, cheaply, that raw is data without errors about hub n:
// the root artifact comes first in both servers' answers.
func validResponse(raw []byte, n int) bool {
	if !bytes.HasPrefix(raw, []byte(`{"data":{`)) || bytes.Contains(raw, []byte(`"errors"`)) {
		return false
	}
	head := raw[:min(len(raw), 160)]
	id := []byte("hub-" + strconv.Itoa(n))
	i := bytes.Index(head, id)
	return i > 0 && i+len(id) < len(head) && (head[i+len(id)] == '"' || head[i+len(id)] == '@')
}

// measure runs `clients` workers, each sending the body of a random hub and
// waiting for the answer, for the warm-up and then the duration, and returns the
// throughput, latencies and CPU use (of process group pgid for the server) of
// the measured part. Any failure ends the run.
func measure(name, url, tok string, bodies [][]byte, clients, pgid int, warmup, duration time.Duration) figures {
	var counting, stopping atomic.Bool
	var failed atomic.Int64
	var firstErr atomic.Value
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			mine := make([]time.Duration, 0, 1<<15)
			for !stopping.Load() {
				n := 1 + rng.IntN(len(bodies))
				t0 := time.Now()
				raw, err := benchkit.Post(client, url, tok, bodies[n-1])
				d := time.Since(t0)
				if err == nil && !validResponse(raw, n) {
					err = fmt.Errorf("hub-%d: %.400s", n, raw)
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				if counting.Load() {
					mine = append(mine, d)
				}
			}
			lat[w] = mine
		}(w)
	}
	time.Sleep(warmup)
	before := benchkit.TakeCPU(pgid, pgData())
	counting.Store(true)
	start := time.Now()
	time.Sleep(duration)
	counting.Store(false)
	elapsed := time.Since(start)
	after := benchkit.TakeCPU(pgid, pgData())
	stopping.Store(true)
	wg.Wait()
	if f := failed.Load(); f > 0 {
		benchkit.Fail(fmt.Errorf("%s: %d failed requests, first: %v", name, f, firstErr.Load()))
	}
	all := slices.Concat(lat...)
	if len(all) == 0 {
		benchkit.Fail(fmt.Errorf("%s: no request completed", name))
	}
	return figures{
		RPS: float64(len(all)) / elapsed.Seconds(),
		P50: benchkit.Percentile(all, 50), P99: benchkit.Percentile(all, 99), N: len(all),
		CPU: before.Use(after, len(all)),
	}
}

// ourBody and pgBody are the request bodies for hub n, encoded once.
func ourBody(n int) []byte {
	return encode(ourQuery, map[string]any{"ref": fmt.Sprintf("hypothesis:hub-%d", n)})
}

func pgBody(n int) []byte {
	return encode(pgQuery, map[string]any{"type": "hypothesis", "id": fmt.Sprintf("hub-%d", n)})
}

func encode(query string, vars map[string]any) []byte {
	b, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	benchkit.Check(err)
	return b
}

func bodies(f func(int) []byte) [][]byte {
	out := make([][]byte, hubs)
	for i := range out {
		out[i] = f(i + 1)
	}
	return out
}
