// Command tools measures docs/targets.md P5 and P8 through the real server.
//
// P5: synchronous invokeTool of a trivial in_process tool (checksum.sha256),
// including its tool_call record, against createArtifact of an artifact of the
// same size, both over HTTP with 16 concurrent clients, alternating, in the
// same run: the throughput ratio and the p50 latency overhead.
//
// P8: asynchronous pickup on an idle server: a queued call's queued_at to
// started_at, as the tool_call records them, over sequential calls.
//
//	go run ./bench/tools -duration 8s
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
	"github.com/scidex/substrate/internal/auth"
)

var (
	clients    = flag.Int("clients", 16, "concurrent clients for P5")
	duration   = flag.Duration("duration", 8*time.Second, "how long each P5 measurement runs")
	warmup     = flag.Duration("warmup", 2*time.Second, "warm-up before each measurement")
	rounds     = flag.Int("rounds", 3, "alternating rounds; the median ratio is reported")
	pickups    = flag.Int("pickups", 50, "sequential async calls for P8")
	sequential = flag.Int("sequential", 500, "alternating single-client pairs for P5's latency overhead")
)

func main() {
	flag.Parse()
	defer benchkit.Cleanup()
	st := benchkit.Start(benchkit.StackOpts{Prefix: "scidex-bench-tools-", Settings: map[string]string{"max_connections": "100"},
		Pool: 32, Flags: []string{"--write-rate", "0"}})
	url := st.GraphQL()
	admin := benchkit.Token("bench-admin", auth.PermAdmin)
	user := benchkit.Token("bench", auth.PermContributor)
	setup(url, admin)

	// The reference artifact is as large as the tool_call a call writes.
	callSize := recordSize(url, user)
	pad := strings.Repeat("x", max(callSize-120, 10))
	createBody := func(w, i int) []byte {
		return fmt.Appendf(nil, `{"query":"mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { __typename } }","variables":{"in":{"type":"hypothesis","title":"bench %d-%d","content":{"target_gene":"TREM2","mechanism":%q}}}}`, w, i, pad)
	}
	invokeBody := func(w, i int) []byte {
		return fmt.Appendf(nil, `{"query":"mutation($in: InvokeToolInput!) { invokeTool(input: $in) { __typename ... on ToolCall { status } } }","variables":{"in":{"name":"checksum.sha256","args":{"text":"bench %d-%d"}}}}`, w, i)
	}
	fmt.Printf("P5 invokeTool (checksum.sha256, sync, in_process) vs createArtifact of a %d-byte artifact, %d clients, %s x %d rounds (%s)\n",
		callSize, *clients, *duration, *rounds, time.Now().UTC().Format(time.RFC3339))
	var ratios, overheads []float64
	for r := 0; r < *rounds; r++ {
		c, cl := measure(url, user, createBody, `"__typename":"WriteSuccess"`)
		v, vl := measure(url, user, invokeBody, `"status":"SUCCEEDED"`)
		over := benchkit.Median(vl) - benchkit.Median(cl)
		fmt.Printf("  round %d: createArtifact %.0f/s p50 %.2f ms; invokeTool %.0f/s p50 %.2f ms; ratio %.0f%%, p50 overhead %.2f ms\n",
			r+1, c, benchkit.Median(cl), v, benchkit.Median(vl), 100*v/c, over)
		ratios = append(ratios, v/c)
		overheads = append(overheads, over)
	}
	fmt.Printf("  P5 throughput: invokeTool median %.0f%% of createArtifact's (target >= 70%%); p50 latency %.2f ms above it at %d clients\n",
		100*benchkit.Median(ratios), benchkit.Median(overheads), *clients)
	// Latency overhead without queueing: one client, the two alternating.
	var diffs []float64
	for i := 0; i < *sequential; i++ {
		t0 := time.Now()
		raw, err := benchkit.Post(client, url, user, createBody(999, i))
		c := time.Since(t0)
		if err != nil || !bytes.Contains(raw, []byte(`"__typename":"WriteSuccess"`)) {
			benchkit.Fail(fmt.Errorf("create: %v %s", err, raw))
		}
		t0 = time.Now()
		raw, err = benchkit.Post(client, url, user, invokeBody(999, i))
		v := time.Since(t0)
		if err != nil || !bytes.Contains(raw, []byte(`"status":"SUCCEEDED"`)) {
			benchkit.Fail(fmt.Errorf("invoke: %v %s", err, raw))
		}
		diffs = append(diffs, float64((v-c).Microseconds())/1000)
	}
	fmt.Printf("  P5 overhead: one client, %d alternating pairs: invokeTool p50 %.2f ms above createArtifact (target < 2 ms)\n", *sequential, benchkit.Median(diffs))

	fmt.Printf("P8 async pickup, %d sequential calls on an idle server\n", *pickups)
	var lat []float64
	for i := 0; i < *pickups; i++ {
		lat = append(lat, pickup(url, user, i))
	}
	fmt.Printf("  P8: queued -> running p50 %.1f ms, p90 %.1f ms, max %.1f ms (target p50 < 50 ms)\n",
		benchkit.Median(lat), benchkit.Percentile(lat, 90), slices.Max(lat))
}

// setup registers the shipped checksum tool and makes it active.
func setup(url, admin string) {
	b, err := os.ReadFile("tools/checksum/tool.json")
	benchkit.Check(err)
	var m map[string]any
	benchkit.Check(json.Unmarshal(b, &m))
	d, err := benchkit.GQL(client, url, admin, `mutation($m: JSON!) { registerTool(input: {manifest: $m}) { ... on WriteSuccess { contentHash } ... on Problem { message } } }`, map[string]any{"m": m})
	benchkit.Check(err)
	hash, _ := d["registerTool"].(map[string]any)["contentHash"].(string)
	_, err = benchkit.GQL(client, url, admin, `mutation($h: String!) { updateArtifact(input: {ref: "tool:checksum.sha256", baseContentHash: $h, lifecycleState: "active"}) { __typename } }`, map[string]any{"h": hash})
	benchkit.Check(err)
}

func recordSize(url, tok string) int {
	d, err := benchkit.GQL(client, url, tok, `mutation { invokeTool(input: {name: "checksum.sha256", args: {text: "bench 0-0"}}) { ... on ToolCall { content } } }`, nil)
	benchkit.Check(err)
	b, _ := json.Marshal(d["invokeTool"].(map[string]any)["content"])
	return len(b)
}

func pickup(url, tok string, i int) float64 {
	d, err := benchkit.GQL(client, url, tok, `mutation($t: String!) { invokeTool(input: {name: "checksum.sha256", args: {text: $t}, async: true}) { ... on ToolCall { artifactId } } }`,
		map[string]any{"t": fmt.Sprint("async ", i)})
	benchkit.Check(err)
	id := d["invokeTool"].(map[string]any)["artifactId"].(string)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		d, err := benchkit.GQL(client, url, tok, `query($id: ID!) { toolCall(id: $id) { status queuedAt startedAt } }`, map[string]any{"id": id})
		benchkit.Check(err)
		c := d["toolCall"].(map[string]any)
		if c["status"] == "SUCCEEDED" {
			q, _ := time.Parse(time.RFC3339Nano, c["queuedAt"].(string))
			s, _ := time.Parse(time.RFC3339Nano, c["startedAt"].(string))
			return float64(s.Sub(q).Microseconds()) / 1000
		}
		time.Sleep(5 * time.Millisecond)
	}
	benchkit.Fail(fmt.Errorf("async call %s did not finish", id))
	return 0
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func measure(url, tok string, body func(w, i int) []byte, want string) (float64, []float64) {
	var done atomic.Int64
	var mu sync.Mutex
	var lat []float64
	l := &benchkit.Load{Workers: *clients, Warmup: *warmup, Measure: *duration}
	elapsed := l.Run(func(w, i int) {
		t0 := time.Now()
		raw, err := benchkit.Post(client, url, tok, body(w, i))
		if err != nil || !bytes.Contains(raw, []byte(want)) {
			benchkit.Fail(fmt.Errorf("request failed: %v %s", err, raw))
		}
		if l.Counting() {
			done.Add(1)
			mu.Lock()
			lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
			mu.Unlock()
		}
	})
	return float64(done.Load()) / elapsed.Seconds(), lat
}
