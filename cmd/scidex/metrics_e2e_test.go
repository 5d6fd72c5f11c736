package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// Issue 17.4: `scidex serve --metrics-addr` serves Prometheus metrics on a
// listener of its own. The real Prometheus server scrapes it on loopback
// while the test does real work (GraphQL requests, one refused and one that
// does not validate, tool calls in process, queued and sandboxed, one killed
// at its wall time, an MCP call, a live subscription), and each metric is
// asked for through Prometheus's query API until the scraped series show the
// work. promtool checks the exposition; the public listener does not serve
// it; the body names no secret, token or actor.
func TestMetricsScrapedByPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	prometheus := e2e.NeedBinary(t, "prometheus")
	promtool := e2e.NeedBinary(t, "promtool")
	secret := "metrics-e2e-secret-0123456789abcdef-0123456789"
	env := []string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + secret}
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env, Args: []string{"--metrics-addr", "127.0.0.1:0"}})
	metricsURL := "http://" + waitLog(t, srv, regexp.MustCompile(`msg="metrics listening" addr=(\S+)`)) + "/metrics"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// Actors whose ids must not reach the metrics.
	admin := mint(t, secret, "metrics-admin-7f3a", auth.PermAdmin)
	alice := mint(t, secret, "metrics-alice-91c2", auth.PermContributor)

	// A live subscription, held open while Prometheus scrapes.
	ws := apitest.DialURL(t, srv.URL, nil)
	defer ws.Close()
	if err := ws.Init(map[string]any{"Authorization": "Bearer " + admin}); err != nil {
		t.Fatal(err)
	}
	ws.Subscribe("live", `subscription { events(types: ["hypothesis.created"]) { type ref } }`, nil)

	// GraphQL: a write, a read, a document that does not validate, a
	// mutation without a token.
	var created struct {
		CreateArtifact struct{ Ref string }
	}
	if err := gql(ctx, srv.URL, alice, `mutation { createArtifact(input: {type: "hypothesis", title: "Metrics see this", content: {target_gene: "TREM2"}}) { ... on WriteSuccess { ref } } }`,
		nil, &created); err != nil || created.CreateArtifact.Ref == "" {
		t.Fatalf("createArtifact: %v %+v", err, created)
	}
	if m := ws.Next("live"); m.Type != "next" {
		t.Fatalf("the subscription answered %+v", m)
	}
	if err := gql(ctx, srv.URL, alice, `query($r: Ref!) { artifact(ref: $r) { title } }`, map[string]any{"r": created.CreateArtifact.Ref}, &map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if err := gql(ctx, srv.URL, alice, `{ noSuchField }`, nil, &map[string]any{}); err == nil {
		t.Fatal("a query of a field that does not exist succeeded")
	}
	if _, errs := srv.GraphQL(t, "", `mutation { createArtifact(input: {type: "hypothesis", title: "x", content: {}}) { __typename } }`, nil); len(errs) == 0 {
		t.Fatal("a mutation without a token succeeded")
	}

	// Tools: a priced in-process tool, called synchronously and queued; a
	// sandboxed one that answers and one killed at its wall time.
	registerPriced(ctx, t, srv.URL, admin, "metrics.priced")
	invoke := func(name string, async bool) (id, status string) {
		var got struct {
			InvokeTool struct{ ArtifactID, Status string }
		}
		if err := gql(ctx, srv.URL, alice, `mutation($n: String!, $async: Boolean) { invokeTool(input: {name: $n, args: {text: "abc"}, async: $async}) { ... on ToolCall { artifactId status } } }`,
			map[string]any{"n": name, "async": async}, &got); err != nil || got.InvokeTool.ArtifactID == "" {
			t.Fatalf("invokeTool %s: %v %+v", name, err, got)
		}
		return got.InvokeTool.ArtifactID, got.InvokeTool.Status
	}
	if _, st := invoke("metrics.priced", false); st != "SUCCEEDED" {
		t.Fatalf("the priced call is %s", st)
	}
	queued, _ := invoke("metrics.priced", true)
	untilCall(t, srv.URL, alice, func() bool {
		var got struct{ ToolCall struct{ Status string } }
		if err := gql(ctx, srv.URL, alice, `query($id: ID!) { toolCall(id: $id) { status } }`, map[string]any{"id": queued}, &got); err != nil {
			t.Fatal(err)
		}
		return got.ToolCall.Status == "SUCCEEDED"
	})
	registerSandboxed(ctx, t, srv.URL, admin, "metrics.echo", "#!/bin/sh\ncat >/dev/null\necho '{}'\n", 1)
	registerSandboxed(ctx, t, srv.URL, admin, "metrics.sleeper", "#!/bin/sh\nsleep 60\necho '{}'\n", 0.02) // 1.2 s
	if _, st := invoke("metrics.echo", false); st != "SUCCEEDED" {
		t.Fatalf("the sandboxed call is %s", st)
	}
	if _, st := invoke("metrics.sleeper", false); st != "FAILED" {
		t.Fatalf("the call past its wall time is %s", st)
	}

	// MCP: one call of a generated tool.
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{token: alice}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_artifact", Arguments: map[string]any{"ref": created.CreateArtifact.Ref}}); err != nil || res.IsError {
		t.Fatalf("get_artifact: %v %+v", err, res)
	}
	_ = cs.Close()

	// Not on the public listener.
	if code := httpStatus(ctx, t, srv.URL+"/metrics"); code != http.StatusNotFound {
		t.Errorf("GET /metrics on the public listener: %d, want 404", code)
	}

	// The exposition passes promtool and holds nothing private.
	body := fetch(ctx, t, metricsURL)
	check := exec.CommandContext(ctx, promtool, "check", "metrics")
	check.Stdin = bytes.NewReader(body)
	if out, err := check.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	for what, s := range map[string]string{"the JWT secret": secret, "the admin's token": admin, "the contributor's token": alice,
		"an actor id": "metrics-admin-7f3a", "another actor id": "metrics-alice-91c2", "an artifact id": strings.TrimPrefix(created.CreateArtifact.Ref, "hypothesis:"),
		"a call id": queued} {
		if bytes.Contains(body, []byte(s)) {
			t.Errorf("/metrics holds %s (%s)", what, s)
		}
	}

	// Prometheus scrapes it every half second.
	prom := startPrometheus(t, prometheus, strings.TrimSuffix(strings.TrimPrefix(metricsURL, "http://"), "/metrics"))
	for _, q := range []struct{ what, expr string }{
		{"the target is up", `up{job="scidex"} == 1`},
		{"a mutation by root field", `scidex_graphql_operations_total{type="mutation",operation="createArtifact",status="ok"} >= 1`},
		{"a query by root field", `scidex_graphql_operations_total{type="query",operation="artifact",status="ok"} >= 1`},
		{"a document that does not validate", `scidex_graphql_operations_total{operation="invalid",status="error"} >= 1`},
		{"a refused mutation", `scidex_graphql_operations_total{type="mutation",operation="createArtifact",status="error"} >= 1`},
		{"errors by code", `scidex_graphql_errors_total{code="VALIDATION_FAILED"} >= 1`},
		{"an unauthenticated error", `scidex_graphql_errors_total{code="UNAUTHENTICATED"} >= 1`},
		{"operation latency", `scidex_graphql_operation_duration_seconds_count{type="mutation",operation="createArtifact"} >= 1`},
		{"HTTP requests by route and code", `scidex_http_requests_total{handler="/graphql",method="post",code="200"} >= 1`},
		{"the MCP route", `scidex_http_requests_total{handler="/mcp"} >= 1`},
		{"HTTP latency", `scidex_http_request_duration_seconds_count{handler="/graphql"} >= 1`},
		{"pool use", `scidex_db_pool_acquires_total > 0`},
		{"pool size", `scidex_db_pool_max_connections > 0`},
		{"pool waits", `scidex_db_pool_empty_acquire_wait_seconds_total >= 0`},
		{"a live subscriber", `scidex_event_subscribers >= 1`},
		{"subscriber drops", `scidex_event_subscriber_drops_total >= 0`},
		{"events dispatched", `scidex_event_dispatch_delay_seconds_count >= 1`},
		{"event lag", `scidex_event_lag_events >= 0 and scidex_event_newest_id > 0`},
		{"queue depth", `scidex_queue_jobs{state="available"} >= 0`},
		{"a job's wait", `scidex_queue_job_wait_seconds_count >= 1`},
		{"a job's run", `scidex_queue_job_duration_seconds_count{status="ok"} >= 1`},
		{"tool calls by tool, runtime and status", `scidex_tool_calls_total{tool="metrics.priced",runtime="in_process",status="succeeded"} >= 2`},
		{"a sandboxed call", `scidex_tool_calls_total{tool="metrics.echo",runtime="bwrap",status="succeeded"} >= 1`},
		{"a failed sandboxed call", `scidex_tool_calls_total{tool="metrics.sleeper",runtime="bwrap",status="failed"} >= 1`},
		{"tool call durations", `scidex_tool_call_duration_seconds_count{tool="metrics.sleeper",runtime="bwrap"} >= 1`},
		{"tool call cost", `scidex_tool_call_cost_usd_total{tool="metrics.priced",runtime="in_process"} >= 0.02`},
		{"a sandbox killed at its wall time", `scidex_sandbox_kills_total{reason="wall_timeout"} >= 1`},
		{"MCP calls by tool", `scidex_mcp_tool_calls_total{tool="get_artifact",status="ok"} >= 1`},
		{"the Go collector", `go_goroutines > 0`},
		{"the process collector", `process_resident_memory_bytes > 0`},
	} {
		prom.until(ctx, t, q.what, q.expr)
	}
}

// waitLog waits for the server's log to match re and returns its first group.
func waitLog(t *testing.T, srv *e2e.Proc, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(srv.Log()); m != nil {
			return m[1]
		}
		time.Sleep(20 * time.Millisecond) // polling the other process's log
	}
	t.Fatalf("no log line matching %s within 30s\n%s", re, srv.Log())
	return ""
}

// registerPriced registers name, an in-process sha256 costing one cent a call, and activates it.
func registerPriced(ctx context.Context, t *testing.T, url, admin, name string) {
	t.Helper()
	m := map[string]any{"name": name, "version": "1.0.0", "summary": "sha256, at a price", "runtime": "in_process",
		"runtime_config": map[string]any{"function": "checksum.sha256"},
		"input_schema":   map[string]any{"type": "object", "required": []any{"text"}, "properties": map[string]any{"text": map[string]any{"type": "string"}}},
		"output_schema":  map[string]any{"type": "object"},
		"cost_model":     map[string]any{"fixed_usd": 0.01}}
	var reg struct{ RegisterTool struct{ ContentHash string } }
	if err := gql(ctx, url, admin, `mutation($m: JSON!) { registerTool(input: {manifest: $m}) { ... on WriteSuccess { contentHash } } }`,
		map[string]any{"m": m}, &reg); err != nil || reg.RegisterTool.ContentHash == "" {
		t.Fatalf("register %s: %v %+v", name, err, reg)
	}
	activate(ctx, t, url, admin, name, reg.RegisterTool.ContentHash)
}

// registerSandboxed registers name, a bwrap tool running script, with the wall time given.
func registerSandboxed(ctx context.Context, t *testing.T, url, admin, name, script string, wallMin float64) {
	t.Helper()
	manifest := map[string]any{"name": name, "version": "1.0.0", "runtime": "bwrap",
		"runtime_config": map[string]any{"command": []any{"run.sh"}},
		"input_schema":   map[string]any{"type": "object"}, "output_schema": map[string]any{"type": "object"},
		"resource_caps": map[string]any{"wall_time_min": wallMin}}
	files := []any{map[string]any{"path": "run.sh", "contentBase64": base64.StdEncoding.EncodeToString([]byte(script))}}
	var reg struct {
		RegisterTool struct{ ContentHash, Message string }
	}
	if err := gql(ctx, url, admin, `mutation($m: JSON!, $f: [ToolFileInput!]) { registerTool(input: {manifest: $m, files: $f}) { ... on WriteSuccess { contentHash } ... on Problem { message } } }`,
		map[string]any{"m": manifest, "f": files}, &reg); err != nil || reg.RegisterTool.ContentHash == "" {
		t.Fatalf("register %s: %v %+v", name, err, reg)
	}
	activate(ctx, t, url, admin, name, reg.RegisterTool.ContentHash)
}

func activate(ctx context.Context, t *testing.T, url, admin, name, hash string) {
	t.Helper()
	if err := gql(ctx, url, admin, `mutation($r: Ref!, $h: String!) { updateArtifact(input: {ref: $r, baseContentHash: $h, lifecycleState: "active"}) { __typename } }`,
		map[string]any{"r": "tool:" + name, "h": hash}, &map[string]any{}); err != nil {
		t.Fatal(err)
	}
}

func httpStatus(ctx context.Context, t *testing.T, u string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func fetch(ctx context.Context, t *testing.T, u string) []byte {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	return b
}

// promServer is a Prometheus server the test runs.
type promServer struct {
	url string
	d   *e2e.Daemon
}

// startPrometheus runs Prometheus on a free loopback port, its
// configuration and storage in a temporary directory, scraping target
// (host:port) as job scidex, and waits until it is ready.
func startPrometheus(t *testing.T, bin, target string) *promServer {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\nscrape_configs:\n  - job_name: scidex\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	p := &promServer{url: "http://" + addr, d: e2e.StartDaemon(t, "prometheus", cmd)}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := p.d.Exited(); err != nil {
			t.Fatalf("%v\n%s", err, p.d.Log())
		}
		if resp, err := http.Get(p.url + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready within 60s\n%s", p.d.Log())
		}
		time.Sleep(50 * time.Millisecond) // polling the other process
	}
}

// until asks Prometheus for expr until it returns a series (a comparison
// that holds), failing after a deadline with the last answer.
func (p *promServer) until(ctx context.Context, t *testing.T, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	last := ""
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/api/v1/query?query="+url.QueryEscape(expr), nil)
		if resp, err := http.DefaultClient.Do(req); err != nil {
			last = err.Error()
		} else {
			var r struct {
				Status string
				Error  string
				Data   struct {
					Result []struct {
						Value []any
					}
				}
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = string(raw)
			if json.Unmarshal(raw, &r) == nil && r.Status == "success" && len(r.Data.Result) > 0 {
				return
			}
			if r.Status == "error" {
				t.Fatalf("%s: prometheus refused %s: %s", what, expr, r.Error)
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Errorf("%s: no series for %s within 45s; last answer %s", what, expr, last)
			return
		}
		time.Sleep(100 * time.Millisecond) // polling Prometheus, which scrapes on its own schedule
	}
}
