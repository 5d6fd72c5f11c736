package metrics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/event"
)

// The metrics of a server wired by internal/app, read in process after a
// known sequence of work: each count is exactly the work done.
func TestServerMetrics(t *testing.T) {
	m := app.NewMetrics()
	const buffer = 4
	const maxResponse = 4096
	e := apitest.New(t, apitest.Opts{App: func(c *app.Config) {
		c.Metrics, c.HubBuffer, c.Server.MaxResponseBytes = m, buffer, maxResponse
	}})
	admin := apitest.Token(t, "metrics-admin", auth.PermAdmin)
	alice := apitest.Contributor(t, "metrics-alice")

	// A subscriber that never reads: dropped once its buffer is full.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The server's own subscriptions (cancellations, the MCP tool list) count.
	base, _ := value(gather(t, m.Gatherer()), "scidex_event_subscribers", nil)
	slow := e.Hub.Subscribe(ctx, event.SubscribeOpts{Actor: auth.System()})
	if n, _ := value(gather(t, m.Gatherer()), "scidex_event_subscribers", nil); n != base+1 {
		t.Errorf("subscribers %v after one more than %v", n, base)
	}
	for i := range buffer + 1 {
		e.OK(t, alice, `mutation($t: String!) { createArtifact(input: {type: "hypothesis", title: $t, content: {}}) { __typename } }`,
			map[string]any{"t": fmt.Sprint("h", i)}, &map[string]any{})
	}
	select {
	case <-slow.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the subscriber that does not read was not dropped")
	}
	if r := e.Post(t, alice, `{ noSuchField }`, nil); len(r.Errors) != 1 {
		t.Fatalf("a query of no such field answered %s", r.Raw)
	}
	if r := e.Post(t, "", `mutation { createArtifact(input: {type: "hypothesis", title: "x", content: {}}) { __typename } }`, nil); len(r.Errors) != 1 {
		t.Fatalf("an anonymous mutation answered %s", r.Raw)
	}

	// A response over the cap is replaced by one error, and counted by it.
	big := `{ a: __schema { types { name description } } }`
	if r := e.Post(t, alice, big, nil); len(r.Errors) != 1 || r.Errors[0].Extensions["reason"] != "RESPONSE_TOO_LARGE" {
		t.Fatalf("a query answering more than %d bytes answered %.300s", maxResponse, r.Raw)
	}

	// A priced in-process tool, called twice.
	manifest := map[string]any{"name": "metrics.priced", "version": "1.0.0", "summary": "sha256, at a price", "runtime": "in_process",
		"runtime_config": map[string]any{"function": "checksum.sha256"},
		"input_schema":   map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
		"output_schema":  map[string]any{"type": "object"},
		"cost_model":     map[string]any{"fixed_usd": 0.25}}
	var reg struct{ RegisterTool struct{ ContentHash string } }
	e.OK(t, admin, `mutation($m: JSON!) { registerTool(input: {manifest: $m}) { ... on WriteSuccess { contentHash } } }`, map[string]any{"m": manifest}, &reg)
	e.OK(t, admin, `mutation($h: String!) { updateArtifact(input: {ref: "tool:metrics.priced", baseContentHash: $h, lifecycleState: "active"}) { __typename } }`,
		map[string]any{"h": reg.RegisterTool.ContentHash}, &map[string]any{})
	for range 2 {
		var got struct{ InvokeTool struct{ Status string } }
		e.OK(t, alice, `mutation { invokeTool(input: {name: "metrics.priced", args: {text: "abc"}}) { ... on ToolCall { status } } }`, nil, &got)
		if got.InvokeTool.Status != "SUCCEEDED" {
			t.Fatalf("the call is %s", got.InvokeTool.Status)
		}
	}

	fams := gather(t, m.Gatherer())
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"scidex_graphql_operations_total", map[string]string{"type": "mutation", "operation": "createArtifact", "status": "ok"}, buffer + 1},
		{"scidex_graphql_operations_total", map[string]string{"type": "mutation", "operation": "createArtifact", "status": "error"}, 1},
		{"scidex_graphql_operations_total", map[string]string{"operation": "invalid", "status": "error"}, 1},
		{"scidex_graphql_operations_total", map[string]string{"type": "mutation", "operation": "invokeTool", "status": "ok"}, 2},
		{"scidex_graphql_errors_total", map[string]string{"code": "VALIDATION_FAILED"}, 2},
		{"scidex_graphql_operations_total", map[string]string{"type": "query", "operation": "introspection", "status": "error"}, 1},
		{"scidex_graphql_errors_total", map[string]string{"code": "UNAUTHENTICATED"}, 1},
		{"scidex_event_subscriber_drops_total", nil, 1},
		{"scidex_tool_calls_total", map[string]string{"tool": "metrics.priced", "runtime": "in_process", "status": "succeeded"}, 2},
		{"scidex_tool_call_cost_usd_total", map[string]string{"tool": "metrics.priced", "runtime": "in_process"}, 0.5},
		{"scidex_tool_call_duration_seconds", map[string]string{"tool": "metrics.priced", "runtime": "in_process"}, 2}, // the count
		{"scidex_event_subscribers", nil, base},
	} {
		if got, ok := value(fams, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	for _, name := range []string{"scidex_db_pool_acquires_total", "scidex_db_pool_max_connections", "scidex_event_newest_id", "scidex_event_dispatch_delay_seconds"} {
		if got, ok := value(fams, name, nil); !ok || got <= 0 {
			t.Errorf("%s = %v (found %v), want more than 0", name, got, ok)
		}
	}
	// The hub has caught up: a lag of 0 once every event is dispatched.
	if got, ok := value(fams, "scidex_queue_jobs", map[string]string{"state": "available"}); !ok || got != 0 {
		t.Errorf("available jobs: %v (found %v)", got, ok)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		lag, ok := value(gather(t, m.Gatherer()), "scidex_event_lag_events", nil)
		if ok && lag == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("event lag %v (found %v) after 30s", lag, ok)
		}
		time.Sleep(20 * time.Millisecond) // the hub dispatches on its own goroutine
	}
}

func gather(t *testing.T, g prometheus.Gatherer) []*dto.MetricFamily {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value is the metric of the family name whose labels include labels: a
// counter's or gauge's value, a histogram's count.
func value(fams []*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue metrics
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), true
			}
		}
	}
	return 0, false
}
