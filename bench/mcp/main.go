// Command mcp measures docs/targets.md P9 through the real server: an MCP
// tools/call of get_artifact over streamable HTTP (/mcp) against the same
// GraphQL query over HTTP (/graphql), in the same run, on the same artifact.
//
// Both sides are plain net/http clients posting pre-built bodies, so what is
// measured is the server (and the one HTTP round trip each side pays), not an
// MCP client library. By default the MCP request is what the 2026-07-28 stateless
// revision requires of a client (SEP-2575): the Mcp-Protocol-Version,
// Mcp-Method and Mcp-Name headers, an Accept of both JSON and an event
// stream, and the per-request _meta (protocolVersion, clientInfo,
// clientCapabilities); with -revision 2025-11-25 it is what the npm and
// Python SDK clients send on the revision they negotiate (neither). Every
// answer is checked: a GraphQL response with the
// artifact and no errors, a JSON-RPC result that is not an error.
//
// Latency is one client, the two requests alternating; throughput is
// -clients concurrent clients, the two alternating in -slices slices a round. The
// ratios are printed against the targets (p50 ≤ 1.3×, throughput ≥ 70 %).
//
//	go run ./bench/mcp -rounds 3 -duration 5s
//	go run ./bench/mcp -bin /tmp/scidex-old   # an already built binary (a before/after pair)
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scidex/substrate/bench/internal/benchkit"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/mcp"
)

var (
	clients    = flag.Int("clients", 16, "concurrent clients for the throughput measurement")
	duration   = flag.Duration("duration", 5*time.Second, "how long each throughput measurement runs")
	warmup     = flag.Duration("warmup", 2*time.Second, "warm-up before the first measurement")
	rounds     = flag.Int("rounds", 3, "alternating rounds; the median ratio is reported")
	sequential = flag.Int("sequential", 2000, "alternating single-client pairs per round for the latency ratio")
	slices     = flag.Int("slices", 5, "alternating slices each throughput measurement of a round is cut into")
	binFlag    = flag.String("bin", "", "an already built scidex binary; empty builds ./cmd/scidex")
	pprofAddr  = flag.String("pprof-addr", "", "passed to the server's --pprof-addr, to profile it while the benchmark runs")
	revision   = flag.String("revision", "2026-07-28", "the protocol revision the MCP requests speak: 2026-07-28 (the stateless one, with its per-request _meta and Mcp-Method/Mcp-Name headers) or 2025-11-25 (what the npm and Python SDK clients negotiate: no _meta, no such headers)")
)

func main() {
	flag.Parse()
	defer benchkit.Cleanup()
	var flags []string
	if *pprofAddr != "" {
		flags = append(flags, "--pprof-addr", *pprofAddr)
	}
	st := benchkit.Start(benchkit.StackOpts{Prefix: "scidex-bench-mcp-", Settings: map[string]string{"max_connections": "100"},
		Bin: *binFlag, Pool: 32, Flags: flags})
	base := st.Server.URL()
	tok := benchkit.Token("bench", auth.PermContributor)

	ref := createArtifact(st.GraphQL(), tok)
	gql, rpc := requests(base, tok, ref)
	// One full check of each answer before the cheap per-request checks.
	checkAnswers(gql, rpc, ref)

	fmt.Printf("P9 tools/call get_artifact over /mcp (revision %s) vs the same query over /graphql, one artifact, "+
		"%d sequential pairs and %d clients x %s (in %d alternating slices) per round, %d rounds (%s)\n",
		*revision, *sequential, *clients, *duration, *slices, *rounds, time.Now().UTC().Format(time.RFC3339))
	// Warm both paths (connections, the query cache, the pool) before counting.
	throughput(gql, *warmup/2)
	throughput(rpc, *warmup/2)
	var latRatios, tpRatios []float64
	var allG, allM []float64
	for r := 0; r < *rounds; r++ {
		g, m := latencies(gql, rpc, *sequential)
		allG, allM = append(allG, g...), append(allM, m...)
		gt, mt := alternating(gql, rpc, *duration)
		lr := pct(m, 50) / pct(g, 50)
		fmt.Printf("  round %d: 1 client  graphql p50 %.3f p90 %.3f p99 %.3f ms | mcp p50 %.3f p90 %.3f p99 %.3f ms | p50 %.2fx\n",
			r+1, pct(g, 50), pct(g, 90), pct(g, 99), pct(m, 50), pct(m, 90), pct(m, 99), lr)
		fmt.Printf("           %d clients graphql %.0f/s | mcp %.0f/s | %.0f%%\n", *clients, gt, mt, 100*mt/gt)
		latRatios = append(latRatios, lr)
		tpRatios = append(tpRatios, mt/gt)
	}
	fmt.Printf("  all rounds, 1 client: graphql p50 %.3f p90 %.3f p99 %.3f ms; mcp p50 %.3f p90 %.3f p99 %.3f ms\n",
		pct(allG, 50), pct(allG, 90), pct(allG, 99), pct(allM, 50), pct(allM, 90), pct(allM, 99))
	lr, tr := median(latRatios), median(tpRatios)
	fmt.Printf("  P9 latency: mcp p50 %.2fx graphql's, median of %d rounds (target <= 1.3x): %s\n", lr, *rounds, benchkit.Verdict(lr <= 1.3))
	fmt.Printf("  P9 throughput: mcp %.0f%% of graphql's at %d clients, median of %d rounds (target >= 70%%): %s\n",
		100*tr, *clients, *rounds, benchkit.Verdict(tr >= 0.7))
}

// request is one pre-built POST and how to tell its answer succeeded.
type request struct {
	name   string
	url    string
	header http.Header
	body   []byte
	ok     func(status int, body []byte) bool
}

// requests builds the two requests: the very document the get_artifact tool
// sends, and the tools/call of that tool.
func requests(base, tok, ref string) (gql, rpc request) {
	doc, err := fsRead("get_artifact.graphql")
	benchkit.Check(err)
	gbody, err := json.Marshal(map[string]any{"query": doc, "operationName": "GetArtifact", "variables": map[string]any{"ref": ref}})
	benchkit.Check(err)
	gql = request{name: "graphql", url: base + "/graphql", body: gbody, header: http.Header{
		"Content-Type": {"application/json"}, "Accept": {"application/json"}, "Authorization": {"Bearer " + tok}},
		ok: func(status int, b []byte) bool {
			return status == http.StatusOK && bytes.HasPrefix(b, []byte(`{"data":{"artifact":{`)) && !bytes.Contains(b, []byte(`"errors"`))
		}}
	params := map[string]any{"name": "get_artifact", "arguments": map[string]any{"ref": ref}}
	header := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Authorization": {"Bearer " + tok},
		"Mcp-Protocol-Version": {*revision}}
	switch *revision {
	case "2026-07-28":
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    *revision,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "bench-mcp", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
		header["Mcp-Method"], header["Mcp-Name"] = []string{"tools/call"}, []string{"get_artifact"}
	case "2025-11-25":
	default:
		benchkit.Fail(fmt.Errorf("-revision %q: want 2026-07-28 or 2025-11-25", *revision))
	}
	rbody, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	benchkit.Check(err)
	rpc = request{name: "mcp", url: base + "/mcp", body: rbody, header: header,
		ok: func(status int, b []byte) bool {
			return status == http.StatusOK && bytes.Contains(b, []byte(`"structuredContent":{"artifact":{`)) &&
				!bytes.Contains(b, []byte(`"isError":true`)) && !bytes.Contains(b, []byte(`"error":{`))
		}}
	return gql, rpc
}

func fsRead(name string) (string, error) {
	f, err := mcp.Operations().Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

// checkAnswers decodes one answer of each and compares the artifact they
// carry: the MCP result's structured content is the GraphQL data.
func checkAnswers(gql, rpc request, ref string) {
	st, gb, err := gql.do()
	benchkit.Check(err)
	var g struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal(gb, &g); err != nil || st != http.StatusOK || len(g.Errors) > 0 || !gql.ok(st, gb) {
		benchkit.Fail(fmt.Errorf("graphql answered %d: %s", st, gb))
	}
	st, mb, err := rpc.do()
	benchkit.Check(err)
	var m struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int
		Error   json.RawMessage
		Result  struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			Content           []struct{ Type, Text string }
			Meta              map[string]any `json:"_meta"`
		}
	}
	if err := json.Unmarshal(mb, &m); err != nil || st != http.StatusOK || m.JSONRPC != "2.0" || m.ID != 1 || m.Error != nil ||
		m.Result.IsError || len(m.Result.Content) != 1 || !rpc.ok(st, mb) {
		benchkit.Fail(fmt.Errorf("mcp answered %d: %s", st, mb))
	}
	if !jsonEqual(m.Result.StructuredContent, g.Data) || !jsonEqual([]byte(m.Result.Content[0].Text), g.Data) {
		benchkit.Fail(fmt.Errorf("the MCP result is not the GraphQL data:\n%s\n%s", mb, gb))
	}
	if !strings.Contains(string(g.Data), ref) {
		benchkit.Fail(fmt.Errorf("the answer is not about %s: %s", ref, g.Data))
	}
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}

func (q request) do() (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, q.url, bytes.NewReader(q.body))
	if err != nil {
		return 0, nil, err
	}
	req.Header = q.header.Clone()
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// timed sends q once and returns its latency in milliseconds.
func (q request) timed() float64 {
	t0 := time.Now()
	st, b, err := q.do()
	d := time.Since(t0)
	if err != nil || !q.ok(st, b) {
		benchkit.Fail(fmt.Errorf("%s answered %d: %v %s", q.name, st, err, b))
	}
	return float64(d.Nanoseconds()) / 1e6
}

// latencies alternates the two requests on one client, n pairs.
func latencies(a, b request, n int) (la, lb []float64) {
	for i := 0; i < n; i++ {
		la = append(la, a.timed())
		lb = append(lb, b.timed())
	}
	return la, lb
}

// alternating measures the throughput of a and b over d each, in -slices
// alternating slices, so that a change of the shared machine's load in the
// middle of a round falls on both.
func alternating(a, b request, d time.Duration) (ta, tb float64) {
	var na, nb, sa, sb float64
	for i := 0; i < *slices; i++ {
		r, secs := count(a, d/time.Duration(*slices))
		na, sa = na+r, sa+secs
		r, secs = count(b, d/time.Duration(*slices))
		nb, sb = nb+r, sb+secs
	}
	return na / sa, nb / sb
}

// throughput runs q on -clients clients for d and returns requests per second.
func throughput(q request, d time.Duration) float64 {
	n, secs := count(q, d)
	return n / secs
}

// count runs q on -clients clients for d: how many answers, in how many seconds.
func count(q request, d time.Duration) (float64, float64) {
	var done atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < *clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				q.timed()
				done.Add(1)
			}
		}()
	}
	time.Sleep(d)
	close(stop)
	wg.Wait()
	return float64(done.Load()), time.Since(start).Seconds()
}

// createArtifact makes the hypothesis both sides read and returns its ref.
func createArtifact(url, tok string) string {
	d, err := benchkit.GQL(client, url, tok, `mutation { createArtifact(input: {type: "hypothesis", title: "bench", `+
		`content: {target_gene: "TREM2", mechanism: "microglial activation", confidence: 0.5}}) { ... on WriteSuccess { ref } } }`, nil)
	benchkit.Check(err)
	created, _ := d["createArtifact"].(map[string]any)["ref"].(string)
	if created == "" {
		benchkit.Fail(fmt.Errorf("create the artifact: %v", d))
	}
	// The unpinned ref: the latest version, as an agent would read it.
	ref, _, _ := strings.Cut(created, "@")
	return ref
}

// pct is the p-th percentile of xs (nearest rank), the way the P9 figures of
// bench/RESULTS.md were taken.
func pct(xs []float64, p int) float64 {
	s := append([]float64{}, xs...)
	sort.Float64s(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}

func median(xs []float64) float64 { return pct(xs, 50) }

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ra, _ := json.Marshal(x)
	rb, _ := json.Marshal(y)
	return bytes.Equal(ra, rb)
}
