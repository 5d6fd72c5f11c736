// Package quietlog keeps a library's own logs at warnings and above: River
// and the MCP SDK log every job fetch and every stateless session at info,
// which would bury the server's own lines (and, per /mcp request, cost three
// log writes) without saying anything an operator acts on.
package quietlog

import (
	"context"
	"log/slog"
)

// Warn returns a logger writing to log's handler only at slog.LevelWarn and
// above; nil means slog.Default().
func Warn(log *slog.Logger) *slog.Logger {
	if log == nil {
		log = slog.Default()
	}
	return slog.New(handler{log.Handler(), slog.LevelWarn})
}

// handler drops records below min. WithAttrs and WithGroup wrap what the
// inner handler returns, so a logger derived with With stays quiet.
type handler struct {
	inner slog.Handler
	min   slog.Level
}

func (h handler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.inner.Enabled(ctx, l)
}

func (h handler) Handle(ctx context.Context, r slog.Record) error { return h.inner.Handle(ctx, r) }

func (h handler) WithAttrs(as []slog.Attr) slog.Handler {
	return handler{h.inner.WithAttrs(as), h.min}
}

func (h handler) WithGroup(name string) slog.Handler { return handler{h.inner.WithGroup(name), h.min} }
