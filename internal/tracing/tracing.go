package tracing

import (
	"context"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// scope names the instrumentation: the tracer every span of the substrate
// comes from (River's come from otelriver's own).
const scope = "github.com/scidex/substrate"

// Opts configures New.
type Opts struct {
	// Logger is told of export failures (the collector down, a refused
	// batch). Nil: slog.Default.
	Logger *slog.Logger
	// ServiceVersion is service.version on every span's resource.
	ServiceVersion string
	// Routes are the path prefixes HTTP spans are named by ("POST
	// /graphql"); any other path is "other" (the same list as the metrics').
	Routes []string
	// Exporter replaces the OTLP exporter (tests give an in-memory one).
	// Spans reach it through the batch processor all the same.
	Exporter sdktrace.SpanExporter
}

// Tracing is the substrate's tracer provider and the instrumentation built
// on it. A nil *Tracing is tracing off: every method is safe on it and
// returns what instruments nothing.
type Tracing struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	routes []string
}

// New builds tracing as cfg says; with cfg.On false it returns nil, and
// nothing was made. Spans are batched (OTEL_BSP_*) and exported over
// OTLP/HTTP, configured by the OTEL_EXPORTER_OTLP_* variables; the batch
// processor's goroutine is the only one started, and Shutdown ends it.
func New(ctx context.Context, cfg Config, o Opts) (*Tracing, error) {
	if !cfg.On {
		return nil, nil
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	exp := o.Exporter
	if exp == nil {
		var err error
		if exp, err = otlptracehttp.New(ctx); err != nil {
			return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
		}
	}
	// Later options win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// over the defaults.
	attrs := []attribute.KeyValue{attribute.String("service.name", "scidex")}
	if o.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", o.ServiceVersion))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("tracing: OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME: %w", err)
	}
	sampler := cfg.Sampler
	if sampler == nil {
		sampler = sdktrace.ParentBased(sdktrace.AlwaysSample())
	}
	// The SDK reports what it cannot do (an export that failed) to the
	// global error handler, the one global this package sets.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", "err", err) }))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithSampler(sampler))
	var props []propagation.TextMapPropagator
	if !cfg.NoTraceContext {
		props = append(props, propagation.TraceContext{})
	}
	if cfg.Baggage {
		props = append(props, propagation.Baggage{})
	}
	return &Tracing{tp: tp, tracer: tp.Tracer(scope), prop: propagation.NewCompositeTextMapPropagator(props...), routes: o.Routes}, nil
}

// Provider is the tracer provider, for instrumentation configured with one;
// nil when tracing is off.
func (t *Tracing) Provider() trace.TracerProvider {
	if t == nil {
		return nil
	}
	return t.tp
}

// Shutdown exports the spans still buffered and stops the batch processor.
// Call it once everything that makes spans has stopped (after the pool is
// closed); ctx bounds the final export.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: shutdown: %w", err)
	}
	return nil
}
