package metrics

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// InstrumentHTTP counts and times the requests h answers, labelled by the
// route their path falls under (Opts.Routes, else "other"), method and
// status code. The wrapped ResponseWriter keeps what h may need of the
// original (flushing for SSE, hijacking for websockets). A nil m returns h.
func (m *Metrics) InstrumentHTTP(h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	routes := append(append([]string(nil), m.routes...), other)
	byRoute := make(map[string]http.Handler, len(routes))
	for _, r := range routes {
		l := prometheus.Labels{"handler": r}
		byRoute[r] = promhttp.InstrumentHandlerCounter(m.httpRequests.MustCurryWith(l),
			promhttp.InstrumentHandlerDuration(m.httpDuration.MustCurryWith(l), h))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		byRoute[m.route(r.URL.Path)].ServeHTTP(w, r)
	})
}

// route is the first of the routes path is, or is under.
func (m *Metrics) route(path string) string {
	for _, r := range m.routes {
		if strings.HasPrefix(path, r) && (len(path) == len(r) || path[len(r)] == '/' || strings.HasSuffix(r, "/")) {
			return r
		}
	}
	return other
}
