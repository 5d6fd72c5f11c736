package tracing

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric/noop"
)

// HTTP gives every request h answers a server span (otelhttp), continuing
// the caller's trace when the request carries a W3C traceparent. Spans are
// named by method and route ("POST /graphql"; Opts.Routes, else "other"),
// never by the full path; the health checks a load balancer polls are not
// traced. A websocket's or an SSE stream's span lasts as long as it does.
// The wrapped ResponseWriter keeps Flusher and Hijacker (httpsnoop). A nil t
// returns h.
func (t *Tracing) HTTP(h http.Handler) http.Handler {
	if t == nil {
		return h
	}
	return otelhttp.NewHandler(h, "http",
		otelhttp.WithTracerProvider(t.tp),
		otelhttp.WithPropagators(t.prop),
		// otelhttp's metrics are Prometheus's job here (internal/metrics).
		otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithFilter(func(r *http.Request) bool { return r.URL.Path != "/healthz" && r.URL.Path != "/readyz" }),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + t.route(r.URL.Path) }),
	)
}

// route is the first of the routes path is, or is under.
func (t *Tracing) route(path string) string {
	for _, r := range t.routes {
		if strings.HasPrefix(path, r) && (len(path) == len(r) || path[len(r)] == '/' || strings.HasSuffix(r, "/")) {
			return r
		}
	}
	return "other"
}
