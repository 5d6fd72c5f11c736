package app

// wireTracing hands the tracing to every component that makes spans: the
// dispatcher (a span per runtime call), the job queue (otelriver), the
// GraphQL handler (an operation interceptor). The HTTP server span is added
// in Serve, the pgx tracer where the pool is made (cmd/scidex), the log
// handler where the logger is. Each field is set only with tracing on.
func (cfg *Config) wireTracing() {
	t := cfg.Tracing
	if t == nil {
		return
	}
	cfg.Tools.Tracer = t
	cfg.Queue.Middleware = append(cfg.Queue.Middleware, t.River()...)
	cfg.Server.Extensions = append(cfg.Server.Extensions, t.GraphQL())
}
