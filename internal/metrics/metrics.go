package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Opts configures the metrics.
type Opts struct {
	// ErrorCodes are the codes GraphQL errors carry in extensions.code (the
	// API's closed set); an error with any other code is counted as "other".
	ErrorCodes []string
	// Routes are the path prefixes HTTP requests are labelled by (the first
	// that matches, longest first is the caller's to order); a path under
	// none of them is "other".
	Routes []string
	// MaxNames caps the distinct tool names (and MCP tool names) kept as
	// label values; later names are "other". Default 200.
	MaxNames int
}

// Metrics is the substrate's metrics and the registry that holds them. A nil
// *Metrics records nothing.
type Metrics struct {
	reg    *prometheus.Registry
	codes  map[string]bool
	routes []string
	tools  *names
	mcps   *names

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	gqlOps      *prometheus.CounterVec
	gqlDuration *prometheus.HistogramVec
	gqlErrors   *prometheus.CounterVec

	hubDrops   prometheus.Counter
	eventDelay prometheus.Histogram

	jobWait     prometheus.Histogram
	jobDuration *prometheus.HistogramVec

	toolCalls    *prometheus.CounterVec
	toolDuration *prometheus.HistogramVec
	toolCost     *prometheus.CounterVec
	sandboxKills *prometheus.CounterVec

	mcpCalls    *prometheus.CounterVec
	mcpDuration *prometheus.HistogramVec
}

// Buckets of the latency histograms, in seconds: from a cached read (a few
// hundred microseconds) to a long tool call.
var (
	requestBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	toolBuckets    = []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800}
)

// New defines every metric in a new registry, with the Go and process
// collectors.
func New(o Opts) *Metrics {
	if o.MaxNames == 0 {
		o.MaxNames = 200
	}
	m := &Metrics{reg: prometheus.NewRegistry(), codes: map[string]bool{}, routes: o.Routes,
		tools: newNames(o.MaxNames), mcps: newNames(o.MaxNames)}
	for _, c := range o.ErrorCodes {
		m.codes[c] = true
	}
	f := factory{m.reg}
	m.httpRequests = f.counterVec("scidex_http_requests_total", "HTTP requests answered, by route, method and status code.", "handler", "method", "code")
	m.httpDuration = f.histogramVec("scidex_http_request_duration_seconds", "Time to answer an HTTP request (to the end of the stream, for websockets and SSE), by route.", requestBuckets, "handler")
	m.gqlOps = f.counterVec("scidex_graphql_operations_total", "GraphQL operations, by operation type, root field (\"invalid\" for a document that failed to parse or validate) and status (ok, or error when the first response carried errors).", "type", "operation", "status")
	m.gqlDuration = f.histogramVec("scidex_graphql_operation_duration_seconds", "Time from a query's or mutation's start to its response, by operation type and root field.", requestBuckets, "type", "operation")
	m.gqlErrors = f.counterVec("scidex_graphql_errors_total", "GraphQL errors sent to clients, by extensions.code.", "code")
	m.hubDrops = f.counter("scidex_event_subscriber_drops_total", "Live subscribers the event hub dropped because they fell a whole buffer behind.")
	m.eventDelay = f.histogram("scidex_event_dispatch_delay_seconds", "Time from an event's occurred_at (its transaction's start) to the hub's dispatch of it.", requestBuckets)
	m.jobWait = f.histogram("scidex_queue_job_wait_seconds", "Time an asynchronous tool call's job waited in the queue, from when it was due to when a worker took it.", toolBuckets)
	m.jobDuration = f.histogramVec("scidex_queue_job_duration_seconds", "Time a worker spent on a job, by status (ok or error).", toolBuckets, "status")
	m.toolCalls = f.counterVec("scidex_tool_calls_total", "Tool calls finished, by tool, runtime and status (succeeded, failed, cancelled).", "tool", "runtime", "status")
	m.toolDuration = f.histogramVec("scidex_tool_call_duration_seconds", "Duration of finished tool calls as their records give it, by tool and runtime.", toolBuckets, "tool", "runtime")
	m.toolCost = f.counterVec("scidex_tool_call_cost_usd_total", "Sum of the cost of finished tool calls, in US dollars, by tool and runtime.", "tool", "runtime")
	m.sandboxKills = f.counterVec("scidex_sandbox_kills_total", "Sandboxes killed, by reason (wall_timeout, memory_limit, pids_limit, cpu_limit, output_too_large, cancelled).", "reason")
	m.mcpCalls = f.counterVec("scidex_mcp_tool_calls_total", "MCP tools/call requests answered, by tool and status (ok, or error for an error result or a JSON-RPC error).", "tool", "status")
	m.mcpDuration = f.histogramVec("scidex_mcp_tool_call_duration_seconds", "Time to answer an MCP tools/call, by tool.", requestBuckets, "tool")
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Register adds collectors of the caller's (tests, or a component's own) to
// the registry.
func (m *Metrics) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, MaxRequestsInFlight: 4})
}

// Gatherer is the registry, to read the metrics in process (tests).
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// factory registers each metric as it defines it.
type factory struct{ reg *prometheus.Registry }

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.reg.MustRegister(c)
	return c
}

func (f factory) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	return c
}

func (f factory) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	f.reg.MustRegister(h)
	return h
}

func (f factory) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	f.reg.MustRegister(h)
	return h
}
