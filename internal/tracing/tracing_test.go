package tracing

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func env(kv ...string) Lookup {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// Which variables turn tracing on, following the specification except for
// its default exporter: nothing set is off.
func TestFromEnvOnOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  Lookup
		on   bool
	}{
		{"nothing", env(), false},
		{"only a service name and batch delay", env("OTEL_SERVICE_NAME", "x", "OTEL_BSP_SCHEDULE_DELAY", "10"), false},
		{"an endpoint", env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"), true},
		{"a traces endpoint", env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://collector/v1/traces"), true},
		{"exporter otlp, default endpoint", env("OTEL_TRACES_EXPORTER", "otlp"), true},
		{"exporter none with an endpoint", env("OTEL_TRACES_EXPORTER", "none", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:1"), false},
		{"exporter list with otlp", env("OTEL_TRACES_EXPORTER", "none, otlp"), true},
		{"SDK disabled", env("OTEL_SDK_DISABLED", "TRUE", "OTEL_TRACES_EXPORTER", "otlp"), false},
		{"SDK not disabled", env("OTEL_SDK_DISABLED", "false", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:1"), true},
	} {
		cfg, problems := FromEnv(tc.env)
		if len(problems) > 0 || cfg.On != tc.on {
			t.Errorf("%s: on %v (problems %q), want %v", tc.name, cfg.On, problems, tc.on)
		}
	}
}

func TestFromEnvRefusals(t *testing.T) {
	for _, tc := range []struct {
		env  Lookup
		want string
	}{
		{env("OTEL_TRACES_SAMPLER", "half"), `OTEL_TRACES_SAMPLER="half": want one of`},
		{env("OTEL_TRACES_SAMPLER", "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG", "x"), `OTEL_TRACES_SAMPLER_ARG="x"`},
		{env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://h/"), `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="ftp://h/"`},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:pw@h:4318"), `OTEL_EXPORTER_OTLP_ENDPOINT=`},
		{env("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"), `OTEL_EXPORTER_OTLP_COMPRESSION="zstd": want gzip or none`},
		{env("OTEL_BSP_MAX_QUEUE_SIZE", "0"), `OTEL_BSP_MAX_QUEUE_SIZE="0": want a whole number, at least 1`},
		{env("OTEL_BSP_MAX_QUEUE_SIZE", "10", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "20"), `OTEL_BSP_MAX_EXPORT_BATCH_SIZE="20": want at most OTEL_BSP_MAX_QUEUE_SIZE (10)`},
		{env("OTEL_PROPAGATORS", "b3"), `OTEL_PROPAGATORS="b3"`},
		{env("OTEL_RESOURCE_ATTRIBUTES", "novalue"), `OTEL_RESOURCE_ATTRIBUTES="novalue"`},
		{env("OTEL_EXPORTER_OTLP_CERTIFICATE", "/no/such/ca.pem"), `OTEL_EXPORTER_OTLP_CERTIFICATE="/no/such/ca.pem": want a readable PEM file`},
	} {
		cfg, problems := FromEnv(tc.env)
		if cfg.On || len(problems) != 1 || !strings.Contains(problems[0], tc.want) {
			t.Errorf("problems %q, want one saying %q", problems, tc.want)
		}
	}
	// A header value is a credential: never repeated.
	if _, problems := FromEnv(env("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key")); len(problems) != 1 || strings.Contains(problems[0], "x-api-key") {
		t.Errorf("headers refusal %q", problems)
	}
}

// Off, every method is safe on nil and instruments nothing.
func TestNilIsOff(t *testing.T) {
	var tr *Tracing
	h := http.NotFoundHandler()
	if tr.HTTP(h) == nil || tr.GraphQL() != nil || tr.Pgx() != nil || tr.River() != nil || tr.Provider() != nil || tr.Shutdown(context.Background()) != nil {
		t.Error("a nil Tracing instruments something")
	}
	ctx := context.Background()
	if got, end := tr.StartCall(ctx, "t", "1", "in_process", "c"); got != ctx {
		t.Error("StartCall on nil changed the context")
	} else {
		end("succeeded", 0, "")
	}
	log := slog.Default()
	if tr.Logger(log) != log {
		t.Error("Logger on nil wrapped the logger")
	}
	if tr, err := New(ctx, Config{}, Opts{}); tr != nil || err != nil {
		t.Errorf("New of an off config: %v %v", tr, err)
	}
}

func TestStatementName(t *testing.T) {
	for sql, want := range map[string]string{
		"-- name: ArtifactGetByID :one\nSELECT 1":   "ArtifactGetByID",
		"  select * from x":                         "SELECT",
		"-- a comment\nWITH a AS (SELECT 1) SELECT": "WITH",
		"":                       "statement",
		"(SELECT 1)":             "statement",
		"-- name:  :one\nINSERT": "INSERT",
	} {
		if got := statementName(sql); got != want {
			t.Errorf("statementName(%q) = %q, want %q", sql, got, want)
		}
	}
}

// A span's context adds its ids to a log record; none, none.
func TestLogHandler(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewTextHandler(&buf, nil))).With("k", "v")
	log.InfoContext(context.Background(), "no span")
	ctx, span := tp.Tracer("t").Start(context.Background(), "s")
	log.InfoContext(ctx, "in span")
	span.End()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "trace_id") ||
		!strings.Contains(lines[1], "trace_id="+span.SpanContext().TraceID().String()+" span_id="+span.SpanContext().SpanID().String()) {
		t.Errorf("log lines:\n%s", buf.String())
	}
}

// HTTP spans are named by route, the health checks are not traced, and
// the wrapped writer still flushes (SSE).
func TestHTTPSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr, err := New(context.Background(), Config{On: true}, Opts{Exporter: exp, Routes: []string{"/graphql", "/artifacts"}})
	if err != nil {
		t.Fatal(err)
	}
	flushed := false
	h := tr.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, flushed = w.(http.Flusher)
	}))
	for _, p := range []string{"/graphql", "/artifacts/hypothesis:x/figure.svg", "/healthz", "/secret/path"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil))
	}
	// The in-memory exporter forgets at shutdown: flush, read, then stop.
	if err := tr.tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	var names []string
	for _, s := range exp.GetSpans() {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "GET /graphql,GET /artifacts,GET other" || !flushed {
		t.Errorf("spans %q (flusher kept: %v)", names, flushed)
	}
}
