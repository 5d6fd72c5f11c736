package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// A nil *Metrics records nothing and wraps nothing: what the components hold
// when metrics are off.
func TestNilRecordsNothing(t *testing.T) {
	var m *Metrics
	m.SubscriberDropped()
	m.EventDispatched(time.Now())
	m.JobWorked(time.Second, time.Second, true)
	m.ToolCallFinished("t", "in_process", "succeeded", time.Second, 1)
	m.SandboxKilled("wall_timeout")
	m.MCPCall("get_artifact", false, time.Millisecond)
	m.WatchPool(nil)
	m.WatchHub(HubOpts{})
	m.WatchQueue(nil)
	if m.GraphQL() != nil {
		t.Error("a nil Metrics has a GraphQL extension")
	}
	h := http.NotFoundHandler()
	if got := m.InstrumentHTTP(h); got == nil {
		t.Error("InstrumentHTTP of a nil Metrics returned nil")
	}
}

// Tool names are label values up to the cap; after it, "other": a registry
// of tools that grows without bound does not grow the series.
func TestToolNamesCapped(t *testing.T) {
	m := New(Opts{MaxNames: 3})
	for _, name := range []string{"a.one", "a.two", "a.three", "a.four", "a.one"} {
		m.ToolCallFinished(name, "in_process", "succeeded", 10*time.Millisecond, 0.25)
	}
	// The runtime's name takes one place of the three: a.one, in_process, a.two.
	for _, c := range []struct {
		tool string
		want float64
	}{{"a.one", 2}, {"a.two", 1}, {"other", 2}} {
		if got := testutil.ToFloat64(m.toolCalls.WithLabelValues(c.tool, "in_process", "succeeded")); got != c.want {
			t.Errorf("calls of %s: %v, want %v", c.tool, got, c.want)
		}
	}
	if got := testutil.ToFloat64(m.toolCost.WithLabelValues("a.one", "in_process")); got != 0.5 {
		t.Errorf("cost of a.one: %v, want 0.5", got)
	}
	if n := testutil.CollectAndCount(m.toolCalls); n != 3 {
		t.Errorf("%d tool call series, want 3", n)
	}
	long := strings.Repeat("x", 200)
	if got := newNames(10).label(long); got != other {
		t.Errorf("a 200-byte name is kept as a label value")
	}
}

// Operations are labelled by their type and first root field, never by the
// client's operation name; introspection alone is "introspection".
func TestOperationLabels(t *testing.T) {
	for _, c := range []struct{ doc, typ, op string }{
		{`query ClientChosenName { artifact(ref: "x") { title } }`, "query", "artifact"},
		{`mutation { a: createArtifact(input: {}) { __typename } b: createArtifact(input: {}) { __typename } }`, "mutation", "createArtifact"},
		{`{ __schema { types { name } } }`, "query", "introspection"},
		{`{ __typename artifacts { totalCount } }`, "query", "__typename"},
		{`query { ...F } fragment F on Query { artifact(ref: "x") { title } }`, "query", "other"},
		{`subscription { events { type } }`, "subscription", "events"},
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: c.doc})
		if err != nil {
			t.Fatal(err)
		}
		typ, op := OperationLabels(&graphql.OperationContext{Operation: doc.Operations[0]})
		if typ != c.typ || op != c.op {
			t.Errorf("%s: %s %s, want %s %s", c.doc, typ, op, c.typ, c.op)
		}
	}
	if typ, op := OperationLabels(nil); typ != "unknown" || op != "invalid" {
		t.Errorf("no operation: %s %s", typ, op)
	}
}

// Errors are counted by the API's codes; any other code, or none, is "other".
func TestErrorCodes(t *testing.T) {
	m := New(Opts{ErrorCodes: []string{"VALIDATION_FAILED", "UNAUTHENTICATED"}})
	m.countErrors(gqlerror.List{
		{Message: "a", Extensions: map[string]any{"code": "VALIDATION_FAILED"}},
		{Message: "b", Extensions: map[string]any{"code": "UNAUTHENTICATED"}},
		{Message: "c", Extensions: map[string]any{"code": "made-up by a client " + time.Now().String()}},
		{Message: "d"},
	})
	for code, want := range map[string]float64{"VALIDATION_FAILED": 1, "UNAUTHENTICATED": 1, "other": 2} {
		if got := testutil.ToFloat64(m.gqlErrors.WithLabelValues(code)); got != want {
			t.Errorf("errors with code %s: %v, want %v", code, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.gqlErrors); n != 3 {
		t.Errorf("%d error series, want 3", n)
	}
}

// HTTP requests are labelled by route, method and status; the handler still
// gets a ResponseWriter that flushes (SSE) and hijacks (websockets).
func TestInstrumentHTTP(t *testing.T) {
	m := New(Opts{Routes: []string{"/graphql", "/mcp"}})
	var flushes, hijacks bool
	h := m.InstrumentHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, flushes = w.(http.Flusher)
		_, hijacks = w.(http.Hijacker)
		if r.URL.Path == "/graphql" {
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, p := range []string{"/graphql", "/graphql", "/mcp", "/graphqlx", "/secret/actor:alice"} {
		resp, err := http.Post(srv.URL+p, "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if !flushes || !hijacks {
		t.Errorf("the wrapped ResponseWriter flushes %v, hijacks %v", flushes, hijacks)
	}
	for _, c := range []struct {
		route, code string
		want        float64
	}{{"/graphql", "418", 2}, {"/mcp", "200", 1}, {"other", "200", 2}} {
		if got := testutil.ToFloat64(m.httpRequests.WithLabelValues(c.route, "post", c.code)); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.route, c.code, got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.httpRequests); n != 3 {
		t.Errorf("%d request series, want 3 (a path is never a label value)", n)
	}
}

// Every metric follows Prometheus's naming conventions (promlint, what
// `promtool check metrics` runs).
func TestLint(t *testing.T) {
	m := New(Opts{ErrorCodes: []string{"VALIDATION_FAILED"}})
	m.ToolCallFinished("a", "bwrap", "failed", time.Second, 0.1)
	m.SandboxKilled("wall_timeout")
	m.MCPCall("get_artifact", true, time.Millisecond)
	m.JobWorked(time.Millisecond, time.Second, false)
	m.EventDispatched(time.Now())
	m.SubscriberDropped()
	m.countErrors(gqlerror.List{{Message: "x"}})
	m.gqlOps.WithLabelValues("query", "artifact", "ok").Inc()
	m.gqlDuration.WithLabelValues("query", "artifact").Observe(0.001)
	m.httpRequests.WithLabelValues("/graphql", "post", "200").Inc()
	m.httpDuration.WithLabelValues("/graphql").Observe(0.001)
	problems, err := testutil.GatherAndLint(m.Gatherer())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}
