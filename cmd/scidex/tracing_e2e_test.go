package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// Issue 17.5: with OTEL_EXPORTER_OTLP_ENDPOINT set, `scidex serve` exports
// its spans over OTLP/HTTP. The test is the collector: an HTTP server on
// loopback decoding each ExportTraceServiceRequest. It does real work —
// a write under a trace the client started, a queued tool call, an
// http_post tool call to a tool server the test runs, a refused token — and
// waits for the spans that must show it, with their names, attributes and
// parents: HTTP → GraphQL → SQL; the River insert, and the work span linked
// back to it; the runtime span under the job and under the request; the
// tool server received a traceparent of the runtime span. The log lines of
// those requests carry their trace ids, and no attribute anywhere holds a
// token, a secret or the data the client sent.
func TestTracingExportsToOTLPReceiver(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	rcv := startOTLPReceiver(t)

	const toolSecret = "trace-tool-secret-5b0e9f2c1d"
	var (
		toolMu      sync.Mutex
		traceparent []string
	)
	tool := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		toolMu.Lock()
		traceparent = append(traceparent, r.Header.Get("Traceparent"))
		toolMu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+toolSecret {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(tool.Close)
	toolHP := strings.TrimPrefix(tool.URL, "http://")
	secretsFile := filepath.Join(t.TempDir(), "secrets.json")
	if err := os.WriteFile(secretsFile, []byte(fmt.Sprintf(`{"TRACE_TOKEN": {"value": %q, "tools": ["trace.post"], "hosts": [%q]}}`, toolSecret, toolHP)), 0o600); err != nil {
		t.Fatal(err)
	}

	jwt := "tracing-e2e-secret-0123456789abcdef-0123456789"
	env := []string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + jwt,
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.url, "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SERVICE_NAME=scidex-e2e"}
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env,
		Args: []string{"--log-level", "debug", "--secrets-file", secretsFile, "--http-post-allow", toolHP}})
	if !strings.Contains(srv.Log(), `msg="tracing on: exporting spans over OTLP/HTTP" endpoint=`+rcv.url) {
		t.Errorf("the start-up log does not say tracing is on:\n%s", srv.Log())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	admin := mint(t, jwt, "trace-admin-7f3a", auth.PermAdmin)
	alice := mint(t, jwt, "trace-alice-91c2", auth.PermContributor)

	// (1) A write, in a trace the client started: its traceparent is the
	// HTTP span's parent.
	clientTrace, clientSpan := "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	const gene = "TRACE-GENE-c0ffee"
	status, body := post(ctx, t, srv.URL, alice, "00-"+clientTrace+"-"+clientSpan+"-01",
		`{"query": "mutation { createArtifact(input: {type: \"hypothesis\", title: \"Traced\", content: {target_gene: \"`+gene+`\"}}) { ... on WriteSuccess { ref } } }"}`)
	if status != http.StatusOK || !strings.Contains(body, `"ref"`) {
		t.Fatalf("createArtifact: %d %s", status, body)
	}
	httpSpan := rcv.wait(t, "the HTTP span of the write", func(s span) bool {
		return s.name == "POST /graphql" && s.trace == clientTrace
	})
	if httpSpan.parent != clientSpan || httpSpan.kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("the HTTP span's parent is %q (kind %v), want the client's %s", httpSpan.parent, httpSpan.kind, clientSpan)
	}
	if httpSpan.attrs["http.response.status_code"] != "200" || httpSpan.resource["service.name"] != "scidex-e2e" {
		t.Errorf("the HTTP span: attributes %v, resource %v", httpSpan.attrs, httpSpan.resource)
	}
	gqlSpan := rcv.wait(t, "the GraphQL span of the write", func(s span) bool {
		return s.name == "mutation createArtifact" && s.parent == httpSpan.id
	})
	if gqlSpan.attrs["graphql.operation.type"] != "mutation" || gqlSpan.attrs["scidex.graphql.root_field"] != "createArtifact" || gqlSpan.attrs["scidex.request_id"] == "" {
		t.Errorf("the GraphQL span's attributes: %v", gqlSpan.attrs)
	}
	sqlSpan := rcv.wait(t, "a statement of the write", func(s span) bool {
		return s.parent == gqlSpan.id && s.attrs["db.system.name"] == "postgresql"
	})
	if sqlSpan.kind != tracepb.Span_SPAN_KIND_CLIENT || sqlSpan.attrs["db.query.text"] == "" || sqlSpan.attrs["db.operation.name"] != sqlSpan.name {
		t.Errorf("the statement span %q: kind %v, attributes %v", sqlSpan.name, sqlSpan.kind, sqlSpan.attrs)
	}

	// (2) A queued call: the River insert within the request, the job's work
	// span linked to it, the runtime span under the work span.
	registerPriced(ctx, t, srv.URL, admin, "trace.priced")
	var queued struct {
		InvokeTool struct{ ArtifactID string }
	}
	if err := gql(ctx, srv.URL, alice, `mutation { invokeTool(input: {name: "trace.priced", args: {text: "trace-arg-9d41"}, async: true}) { ... on ToolCall { artifactId } } }`,
		nil, &queued); err != nil || queued.InvokeTool.ArtifactID == "" {
		t.Fatalf("invokeTool async: %v %+v", err, queued)
	}
	insert := rcv.wait(t, "the River insert", func(s span) bool { return s.name == "river.insert_many" })
	invokeSpan := rcv.wait(t, "the GraphQL span of the queued call", func(s span) bool { return s.id == insert.parent })
	if invokeSpan.name != "mutation invokeTool" || insert.kind != tracepb.Span_SPAN_KIND_PRODUCER {
		t.Errorf("the River insert (kind %v) is under %q, want mutation invokeTool", insert.kind, invokeSpan.name)
	}
	work := rcv.wait(t, "the River work span", func(s span) bool { return s.name == "river.work/tool_call" })
	if work.kind != tracepb.Span_SPAN_KIND_CONSUMER || work.attrs["kind"] != "tool_call" || work.attrs["status"] != "ok" {
		t.Errorf("the work span: kind %v, attributes %v", work.kind, work.attrs)
	}
	if len(work.links) != 1 || work.links[0] != insert.trace+"/"+insert.id {
		t.Errorf("the work span links %v, want the insert %s/%s", work.links, insert.trace, insert.id)
	}
	asyncCall := rcv.wait(t, "the runtime span of the queued call", func(s span) bool {
		return s.name == "execute_tool trace.priced" && s.parent == work.id
	})
	for k, want := range map[string]string{"gen_ai.tool.name": "trace.priced", "gen_ai.tool.call.id": queued.InvokeTool.ArtifactID,
		"scidex.tool.runtime": "in_process", "scidex.tool.version": "1.0.0", "scidex.tool_call.status": "succeeded", "scidex.tool_call.cost_usd": "0.01"} {
		if asyncCall.attrs[k] != want {
			t.Errorf("the queued call's span: %s = %q, want %q (all: %v)", k, asyncCall.attrs[k], want, asyncCall.attrs)
		}
	}
	rcv.wait(t, "a statement of the job", func(s span) bool { return s.parent == work.id && s.attrs["db.system.name"] == "postgresql" })

	// (3) An http_post call, synchronous: the runtime span under the
	// request's GraphQL span, and its traceparent at the tool.
	registerPost(ctx, t, srv.URL, admin, "trace.post", tool.URL+"/run")
	postTrace := "5bf92f3577b34da6a3ce929d0e0e4737"
	status, body = post(ctx, t, srv.URL, alice, "00-"+postTrace+"-"+clientSpan+"-01",
		`{"query": "mutation { invokeTool(input: {name: \"trace.post\", args: {text: \"trace-arg-9d41\"}}) { ... on ToolCall { status } } }"}`)
	if status != http.StatusOK || !strings.Contains(body, "SUCCEEDED") {
		t.Fatalf("invokeTool trace.post: %d %s", status, body)
	}
	postCall := rcv.wait(t, "the runtime span of the http_post call", func(s span) bool {
		return s.name == "execute_tool trace.post" && s.trace == postTrace
	})
	if parent := rcv.wait(t, "the parent of the http_post call's span", func(s span) bool { return s.id == postCall.parent }); parent.name != "mutation invokeTool" {
		t.Errorf("the http_post call's span is under %q, want mutation invokeTool", parent.name)
	}
	if postCall.attrs["scidex.tool.runtime"] != "http_post" || postCall.attrs["scidex.tool_call.status"] != "succeeded" {
		t.Errorf("the http_post call's span: %v", postCall.attrs)
	}
	toolMu.Lock()
	got := append([]string(nil), traceparent...)
	toolMu.Unlock()
	if want := "00-" + postTrace + "-" + postCall.id + "-01"; len(got) != 1 || got[0] != want {
		t.Errorf("the tool server received traceparent %q, want [%s]", got, want)
	}
	// The runtime logs its call with the call's span.
	if !regexp.MustCompile(`msg="http_post call" .*trace_id=` + postTrace + ` span_id=` + postCall.id).MatchString(srv.Log()) {
		t.Errorf("the http_post call's log line does not carry its trace and span ids:\n%s", grepLines(srv.Log(), "http_post call"))
	}

	// (4) A refused token: its log line carries the request's trace id.
	refusedTrace := "6bf92f3577b34da6a3ce929d0e0e4738"
	if status, _ := post(ctx, t, srv.URL, "not-a-jwt", "00-"+refusedTrace+"-"+clientSpan+"-01", `{"query": "{ me { id } }"}`); status != http.StatusUnauthorized {
		t.Fatalf("a bad token: %d, want 401", status)
	}
	refused := rcv.wait(t, "the HTTP span of the refused request", func(s span) bool { return s.trace == refusedTrace && s.name == "POST /graphql" })
	if refused.attrs["http.response.status_code"] != "401" {
		t.Errorf("the refused request's span: %v", refused.attrs)
	}
	waitLog(t, srv, regexp.MustCompile(`(msg="token refused" .*trace_id=`+refusedTrace+` span_id=`+refused.id+`)`))

	// (5) A document that does not validate: no operation span, an event on
	// the HTTP span with its code.
	invalidTrace := "7bf92f3577b34da6a3ce929d0e0e4739"
	post(ctx, t, srv.URL, alice, "00-"+invalidTrace+"-"+clientSpan+"-01", `{"query": "{ noSuchField }"}`)
	invalid := rcv.wait(t, "the HTTP span of an invalid document", func(s span) bool { return s.trace == invalidTrace && s.name == "POST /graphql" })
	if !strings.Contains(invalid.events, "graphql.invalid") || !strings.Contains(invalid.events, "VALIDATION_FAILED") {
		t.Errorf("the invalid document's span events: %s", invalid.events)
	}

	// Nothing private in any span, event or resource.
	for what, s := range map[string]string{"the JWT secret": jwt, "the admin's token": admin, "the contributor's token": alice,
		"the tool's secret": toolSecret, "the secret's name": "TRACE_TOKEN", "the content written": gene, "the tool's arguments": "trace-arg-9d41",
		"an actor id": "trace-alice-91c2", "another actor id": "trace-admin-7f3a"} {
		if where := rcv.find(s); where != "" {
			t.Errorf("a span holds %s: %s", what, where)
		}
	}
}

// With no OTEL_* variable nothing is exported, not even to the default
// endpoint (a receiver listens there when the port is free); nor with an
// endpoint set and OTEL_SDK_DISABLED=true, nor with OTEL_TRACES_EXPORTER=none.
func TestTracingOffByDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	jwt := "tracing-off-secret-0123456789abcdef-0123456789"
	alice := mint(t, jwt, "alice", auth.PermContributor)
	rcv := startOTLPReceiver(t)
	var def *otlpReceiver
	if ln, err := net.Listen("tcp", "127.0.0.1:4318"); err == nil {
		def = serveOTLP(t, ln)
	} else {
		t.Logf("port 4318 is taken (%v): the default endpoint is not watched", err)
	}
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"no variables", []string{"OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SERVICE_NAME=quiet"}},
		{"SDK disabled", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.url, "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SDK_DISABLED=true"}},
		{"exporter none", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.url, "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_TRACES_EXPORTER=none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append([]string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + jwt}, tc.env...)
			srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var out map[string]any
			if err := gql(ctx, srv.URL, alice, `mutation { createArtifact(input: {type: "hypothesis", title: "Untraced", content: {}}) { __typename } }`, nil, &out); err != nil {
				t.Fatal(err)
			}
			post(ctx, t, srv.URL, alice, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", `{"query": "{ me { id } }"}`)
			// A clean stop flushes whatever a tracer provider would hold.
			if err := srv.Signal(t, syscall.SIGTERM, time.Minute); err != nil {
				t.Fatalf("scidex serve: %v\n%s", err, srv.Log())
			}
			if strings.Contains(srv.Log(), "tracing on") || strings.Contains(srv.Log(), "trace_id=") {
				t.Errorf("the log shows tracing:\n%s", srv.Log())
			}
		})
	}
	if n := rcv.requests(); n != 0 {
		t.Errorf("the receiver got %d exports", n)
	}
	if def != nil && def.requests() != 0 {
		t.Errorf("the default endpoint got %d exports", def.requests())
	}
}

// post sends a GraphQL request with a traceparent and returns the status
// and body.
func post(ctx context.Context, t *testing.T, url, token, traceparent, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Traceparent", traceparent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// registerPost registers name, an http_post tool at u carrying TRACE_TOKEN, and activates it.
func registerPost(ctx context.Context, t *testing.T, url, admin, name, u string) {
	t.Helper()
	m := map[string]any{"name": name, "version": "1.0.0", "summary": "posts", "runtime": "http_post",
		"runtime_config": map[string]any{"url": u, "secret_ref": "TRACE_TOKEN", "timeout_ms": 10000},
		"input_schema":   map[string]any{"type": "object"}, "output_schema": map[string]any{"type": "object"}}
	var reg struct {
		RegisterTool struct{ ContentHash, Message string }
	}
	if err := gql(ctx, url, admin, `mutation($m: JSON!) { registerTool(input: {manifest: $m}) { ... on WriteSuccess { contentHash } ... on Problem { message } } }`,
		map[string]any{"m": m}, &reg); err != nil || reg.RegisterTool.ContentHash == "" {
		t.Fatalf("register %s: %v %+v", name, err, reg)
	}
	activate(ctx, t, url, admin, name, reg.RegisterTool.ContentHash)
}

func grepLines(log, s string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// span is one received span, flattened: ids in hex, attribute values as
// text.
type span struct {
	name, trace, id, parent string
	kind                    tracepb.Span_SpanKind
	attrs, resource         map[string]string
	links                   []string // trace/span
	events                  string   // names and attributes, for searching
}

// otlpReceiver is an OTLP/HTTP trace collector: POST /v1/traces with a
// protobuf ExportTraceServiceRequest (gzip or not).
type otlpReceiver struct {
	url     string
	mu      sync.Mutex
	spans   []span
	raw     [][]byte // every request body, decompressed, for searching
	n       int
	changed chan struct{} // closed and replaced at each export
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOTLP(t, ln)
}

func serveOTLP(t *testing.T, ln net.Listener) *otlpReceiver {
	r := &otlpReceiver{url: "http://" + ln.Addr().String(), changed: make(chan struct{})}
	hs := &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return r
}

func (r *otlpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces, application/x-protobuf", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	var msg coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &msg)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []span
	for _, rs := range msg.GetResourceSpans() {
		res := attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := span{name: s.GetName(), trace: hex.EncodeToString(s.GetTraceId()), id: hex.EncodeToString(s.GetSpanId()),
					parent: hex.EncodeToString(s.GetParentSpanId()), kind: s.GetKind(), attrs: attrMap(s.GetAttributes()), resource: res}
				for _, l := range s.GetLinks() {
					sp.links = append(sp.links, hex.EncodeToString(l.GetTraceId())+"/"+hex.EncodeToString(l.GetSpanId()))
				}
				var ev strings.Builder
				for _, e := range s.GetEvents() {
					fmt.Fprintf(&ev, "%s %v; ", e.GetName(), attrMap(e.GetAttributes()))
				}
				sp.events = ev.String()
				got = append(got, sp)
			}
		}
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.raw = append(r.raw, b)
	r.n++
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = anyText(kv.GetValue())
	}
	return m
}

func anyText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, anyText(e))
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

// wait returns the first span received that matches, waiting for each
// export until a deadline.
func (r *otlpReceiver) wait(t *testing.T, what string, match func(span) bool) span {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		for _, s := range r.spans {
			if match(s) {
				r.mu.Unlock()
				return s
			}
		}
		changed, n := r.changed, len(r.spans)
		r.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%s: no such span among the %d received within 30s:\n%s", what, n, r.summary())
		}
	}
}

func (r *otlpReceiver) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, s := range r.spans {
		fmt.Fprintf(&b, "  %s trace=%s id=%s parent=%s %v\n", s.name, s.trace, s.id, s.parent, s.attrs)
	}
	return b.String()
}

// find says which span (or raw export) holds s anywhere, "" if none.
func (r *otlpReceiver) find(s string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sp := range r.spans {
		for k, v := range sp.attrs {
			if strings.Contains(v, s) {
				return fmt.Sprintf("%s: %s=%q", sp.name, k, v)
			}
		}
		if strings.Contains(sp.events, s) || strings.Contains(sp.name, s) {
			return sp.name + ": " + sp.events
		}
	}
	for _, b := range r.raw {
		if bytes.Contains(b, []byte(s)) {
			return "a raw export request"
		}
	}
	return ""
}

func (r *otlpReceiver) requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}
