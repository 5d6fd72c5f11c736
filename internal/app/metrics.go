package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/scidex/substrate/internal/metrics"
	"github.com/scidex/substrate/internal/problem"
)

// Routes are the path prefixes HTTP requests are counted by in the metrics;
// every other path is "other".
var Routes = []string{"/graphql", "/graphiql", "/mcp", "/artifacts", "/auth", "/healthz", "/readyz"}

// NewMetrics is the substrate's metrics, labelled by the API's error codes
// and the server's routes: give it to Config.Metrics (and to the runtimes
// that report sandbox kills).
func NewMetrics() *metrics.Metrics {
	codes := make([]string, len(problem.Codes))
	for i, c := range problem.Codes {
		codes[i] = string(c)
	}
	return metrics.New(metrics.Opts{ErrorCodes: codes, Routes: Routes})
}

// wireMetrics hands m to every component that reports to it and registers
// the collectors that read the pool, the hub and the queue at a scrape.
// Each field is set only with metrics on: a component holding no Metrics
// records nothing and pays nothing.
func (cfg *Config) wireMetrics() {
	m := cfg.Metrics
	if m == nil {
		return
	}
	cfg.Tools.Metrics = m
	cfg.Queue.Metrics = m
	cfg.Server.MCP.Metrics = m
	cfg.Server.Extensions = append(cfg.Server.Extensions, m.GraphQL())
	m.WatchPool(cfg.Pool)
}

// startMetrics serves /metrics on its own listener, never the public one.
func (a *App) startMetrics(ctx context.Context) error {
	ln, err := net.Listen("tcp", a.cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("--metrics-addr (SCIDEX_METRICS_ADDR): listen on %s: %w", a.cfg.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.cfg.Metrics.Handler())
	a.metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	a.log.Info("metrics listening", "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String()+"/metrics")
	a.group.Go(func() error {
		if err := a.metricsSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && ctx.Err() == nil {
			a.log.Warn("metrics listener stopped", "err", err)
		}
		return nil
	})
	return nil
}
