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
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/pgembed"
)

var (
	clients    = flag.Int("clients", 16, "concurrent clients for P5")
	duration   = flag.Duration("duration", 8*time.Second, "how long each P5 measurement runs")
	warmup     = flag.Duration("warmup", 2*time.Second, "warm-up before each measurement")
	rounds     = flag.Int("rounds", 3, "alternating rounds; the median ratio is reported")
	pickups    = flag.Int("pickups", 50, "sequential async calls for P8")
	sequential = flag.Int("sequential", 500, "alternating single-client pairs for P5's latency overhead")
)

const secret = "bench-secret-0123456789abcdef-0123456789abcdef"

func main() {
	flag.Parse()
	dir, err := os.MkdirTemp("", "scidex-bench-tools-")
	check(err)
	_ = os.Chmod(dir, 0o755)
	defer os.RemoveAll(dir)
	ctx := context.Background()
	cluster, err := pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(dir, "pg"), Settings: map[string]string{"max_connections": "100"}})
	check(err)
	defer cluster.Stop(context.Background())
	bin := filepath.Join(dir, "scidex")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/scidex").CombinedOutput(); err != nil {
		fail(fmt.Errorf("build: %v\n%s", err, out))
	}
	srv, url := startServer(bin, dir, cluster.ConnString())
	defer func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }()
	admin := token("bench-admin", auth.PermAdmin)
	user := token("bench", auth.PermContributor)
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
		over := p50(vl) - p50(cl)
		fmt.Printf("  round %d: createArtifact %.0f/s p50 %.2f ms; invokeTool %.0f/s p50 %.2f ms; ratio %.0f%%, p50 overhead %.2f ms\n",
			r+1, c, p50(cl), v, p50(vl), 100*v/c, over)
		ratios = append(ratios, v/c)
		overheads = append(overheads, over)
	}
	fmt.Printf("  P5 throughput: invokeTool median %.0f%% of createArtifact's (target >= 70%%); p50 latency %.2f ms above it at %d clients\n",
		100*median(ratios), median(overheads), *clients)
	// Latency overhead without queueing: one client, the two alternating.
	var diffs []float64
	for i := 0; i < *sequential; i++ {
		t0 := time.Now()
		raw, err := post(url, user, createBody(999, i))
		c := time.Since(t0)
		if err != nil || !bytes.Contains(raw, []byte(`"__typename":"WriteSuccess"`)) {
			fail(fmt.Errorf("create: %v %s", err, raw))
		}
		t0 = time.Now()
		raw, err = post(url, user, invokeBody(999, i))
		v := time.Since(t0)
		if err != nil || !bytes.Contains(raw, []byte(`"status":"SUCCEEDED"`)) {
			fail(fmt.Errorf("invoke: %v %s", err, raw))
		}
		diffs = append(diffs, float64((v-c).Microseconds())/1000)
	}
	fmt.Printf("  P5 overhead: one client, %d alternating pairs: invokeTool p50 %.2f ms above createArtifact (target < 2 ms)\n", *sequential, median(diffs))

	fmt.Printf("P8 async pickup, %d sequential calls on an idle server\n", *pickups)
	var lat []float64
	for i := 0; i < *pickups; i++ {
		lat = append(lat, pickup(url, user, i))
	}
	sort.Float64s(lat)
	fmt.Printf("  P8: queued -> running p50 %.1f ms, p90 %.1f ms, max %.1f ms (target p50 < 50 ms)\n", lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1])
}

func token(sub string, p auth.Permission) string {
	tok, err := auth.Mint(auth.MintOpts{Secret: []byte(secret), Issuer: "scidex", Audience: "scidex", Subject: sub,
		Kind: auth.KindAILocal, Permissions: []auth.Permission{p}, TTL: time.Hour, Now: time.Now()})
	check(err)
	return tok
}

// setup registers the shipped checksum tool and makes it active.
func setup(url, admin string) {
	b, err := os.ReadFile("tools/checksum/tool.json")
	check(err)
	var m map[string]any
	check(json.Unmarshal(b, &m))
	d, err := gql(url, admin, `mutation($m: JSON!) { registerTool(input: {manifest: $m}) { ... on WriteSuccess { contentHash } ... on Problem { message } } }`, map[string]any{"m": m})
	check(err)
	hash, _ := d["registerTool"].(map[string]any)["contentHash"].(string)
	_, err = gql(url, admin, `mutation($h: String!) { updateArtifact(input: {ref: "tool:checksum.sha256", baseContentHash: $h, lifecycleState: "active"}) { __typename } }`, map[string]any{"h": hash})
	check(err)
}

func recordSize(url, tok string) int {
	d, err := gql(url, tok, `mutation { invokeTool(input: {name: "checksum.sha256", args: {text: "bench 0-0"}}) { ... on ToolCall { content } } }`, nil)
	check(err)
	b, _ := json.Marshal(d["invokeTool"].(map[string]any)["content"])
	return len(b)
}

func pickup(url, tok string, i int) float64 {
	d, err := gql(url, tok, `mutation($t: String!) { invokeTool(input: {name: "checksum.sha256", args: {text: $t}, async: true}) { ... on ToolCall { artifactId } } }`,
		map[string]any{"t": fmt.Sprint("async ", i)})
	check(err)
	id := d["invokeTool"].(map[string]any)["artifactId"].(string)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		d, err := gql(url, tok, `query($id: ID!) { toolCall(id: $id) { status queuedAt startedAt } }`, map[string]any{"id": id})
		check(err)
		c := d["toolCall"].(map[string]any)
		if c["status"] == "SUCCEEDED" {
			q, _ := time.Parse(time.RFC3339Nano, c["queuedAt"].(string))
			s, _ := time.Parse(time.RFC3339Nano, c["startedAt"].(string))
			return float64(s.Sub(q).Microseconds()) / 1000
		}
		time.Sleep(5 * time.Millisecond)
	}
	fail(fmt.Errorf("async call %s did not finish", id))
	return 0
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func measure(url, tok string, body func(w, i int) []byte, want string) (float64, []float64) {
	var done atomic.Int64
	var counting atomic.Bool
	stop := make(chan struct{})
	var mu sync.Mutex
	var lat []float64
	var wg sync.WaitGroup
	for w := 0; w < *clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				raw, err := post(url, tok, body(w, i))
				if err != nil || !bytes.Contains(raw, []byte(want)) {
					fail(fmt.Errorf("request failed: %v %s", err, raw))
				}
				if counting.Load() {
					done.Add(1)
					mu.Lock()
					lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
					mu.Unlock()
				}
			}
		}(w)
	}
	time.Sleep(*warmup)
	counting.Store(true)
	start := time.Now()
	time.Sleep(*duration)
	counting.Store(false)
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	return float64(done.Load()) / elapsed.Seconds(), lat
}

func p50(xs []float64) float64 { return median(xs) }

func median(xs []float64) float64 {
	s := append([]float64{}, xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func startServer(bin, dir, dbURL string) (*exec.Cmd, string) {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--write-rate", "0", "--log-level", "info")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL+" pool_max_conns=32", "SCIDEX_JWT_SECRET="+secret)
	stderr, _ := cmd.StderrPipe()
	check(cmd.Start())
	re := regexp.MustCompile(`msg=listening addr=(\S+)`)
	var buf []byte
	tmp := make([]byte, 512)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		n, err := stderr.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if m := re.FindSubmatch(buf); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return cmd, "http://" + string(m[1]) + "/graphql"
		}
		if err != nil {
			break
		}
	}
	fail(fmt.Errorf("server did not start:\n%s", buf))
	return nil, ""
}

func gql(url, tok, query string, vars map[string]any) (map[string]any, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	raw, err := post(url, tok, body)
	if err != nil {
		return nil, err
	}
	var out struct {
		Data   map[string]any `json:"data"`
		Errors []any          `json:"errors"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%w: %s", err, raw)
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("%v", out.Errors)
	}
	return out.Data, nil
}

func post(url, tok string, body []byte) ([]byte, error) {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func check(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/tools:", err)
	os.Exit(1)
}
