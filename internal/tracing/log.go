package tracing

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Logger returns log with trace_id and span_id added to every record logged
// with a context that carries a span (LogAttrs, InfoContext…): a request's
// log lines name the trace that shows it. A nil t returns log unchanged.
func (t *Tracing) Logger(log *slog.Logger) *slog.Logger {
	if t == nil || log == nil {
		return log
	}
	return slog.New(LogHandler(log.Handler()))
}

// LogHandler wraps h so that records logged with a span's context carry its
// trace_id and span_id.
func LogHandler(h slog.Handler) slog.Handler { return logHandler{h} }

type logHandler struct{ slog.Handler }

func (l logHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone() // a copy of a record shares its attributes' storage
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return l.Handler.Handle(ctx, r)
}

func (l logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return logHandler{l.Handler.WithAttrs(attrs)}
}

func (l logHandler) WithGroup(name string) slog.Handler { return logHandler{l.Handler.WithGroup(name)} }
