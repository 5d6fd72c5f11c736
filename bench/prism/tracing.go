package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/scidex/substrate/bench/internal/benchkit"
)

// spansReceived counts the spans the bench's OTLP receiver decoded.
var spansReceived atomic.Int64

// startWithTracing starts a second server on st's database, like the first
// but with tracing on: every request sampled (OTEL_TRACES_SAMPLER=always_on),
// exported over OTLP/HTTP every second (the SDK's default batch delay is 5 s)
// to a receiver in this process that decodes each export, counts its spans
// and drops them. The receiver's CPU is the bench's, not the server's.
func startWithTracing(st *benchkit.Stack) (string, int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	benchkit.Check(err)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil && proto.Unmarshal(b, &req) == nil {
			n := 0
			for _, rs := range req.GetResourceSpans() {
				for _, ss := range rs.GetScopeSpans() {
					n += len(ss.GetSpans())
				}
			}
			spansReceived.Add(int64(n))
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	})}
	go func() { _ = hs.Serve(ln) }()
	benchkit.AtExit(func() { _ = hs.Close() })
	endpoint := "http://" + ln.Addr().String()
	srv := benchkit.StartServer(benchkit.ServerOpts{Bin: st.Bin, Group: true,
		Args: []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(st.Dir, "data-tracing"), "--log-level", "info",
			"--write-rate", "0"},
		Env: []string{fmt.Sprintf("DATABASE_URL=%s pool_max_conns=%d", st.Cluster.ConnString(), *pool), "SCIDEX_JWT_SECRET=" + benchkit.Secret,
			"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint, "OTEL_TRACES_SAMPLER=always_on", "OTEL_BSP_SCHEDULE_DELAY=1000"}})
	fmt.Printf("  a second server with tracing on (always_on), exporting to %s\n", endpoint)
	return srv.URL() + "/graphql", srv.Cmd.Process.Pid
}

// reportTracing prints the medians of the per-round ratios of the server
// with tracing on to the one without, and the spans it exported per page.
func reportTracing(off, on []figures, pages int64) {
	ratio := func(f func(i int) float64) float64 {
		v := make([]float64, len(on))
		for i := range v {
			v[i] = f(i)
		}
		return benchkit.Median(v)
	}
	rps := ratio(func(i int) float64 { return on[i].RPS / off[i].RPS })
	cpu := ratio(func(i int) float64 { return float64(on[i].CPU.Server) / float64(off[i].CPU.Server) })
	p99 := ratio(func(i int) float64 { return float64(on[i].P99) / float64(off[i].P99) })
	perPage := 0.0
	if pages > 0 {
		perPage = float64(spansReceived.Load()) / float64(pages)
	}
	fmt.Printf("  tracing on/off, median of %d rounds: throughput %.3f, server CPU per request %.3f, p99 %.3f; %d spans received, %.1f per page\n",
		len(on), rps, cpu, p99, spansReceived.Load(), perPage)
}
