package main

import (
	"cmp"
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/tracing"
)

// newTracing is the process's tracing as the OTEL_* variables ask for it,
// and log with trace ids added; nil (and log as it was) when they ask for
// none. A malformed variable is a configuration problem: the command does
// not start (exit 2), and the refusal names the variable.
func newTracing(ctx context.Context, log *slog.Logger) (*tracing.Tracing, *slog.Logger, error) {
	cfg, problems := tracing.FromEnv(nil)
	if len(problems) > 0 {
		return nil, log, &configError{problems: problems}
	}
	t, err := tracing.New(ctx, cfg, tracing.Opts{Logger: log, Routes: app.Routes})
	if err != nil {
		return nil, log, err
	}
	if t != nil {
		endpoint := cmp.Or(os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "http://localhost:4318")
		log.Info("tracing on: exporting spans over OTLP/HTTP", "endpoint", endpoint, "sampler", cfg.Sampler.Description())
	}
	return t, t.Logger(log), nil
}

// stopTracing exports what is still buffered, within a few seconds: the
// last spans of a shutdown are worth a short wait, not a hung exit.
func stopTracing(t *tracing.Tracing, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		log.Warn("tracing: the last spans were not exported", "err", err)
	}
}
