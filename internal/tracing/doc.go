// Package tracing owns the substrate's OpenTelemetry traces: the tracer
// provider, configured by the standard OTEL_* variables (FromEnv) and off
// unless they name an exporter, and the instrumentation that makes spans of
// what the server does: HTTP requests (otelhttp), GraphQL operations (an
// operation interceptor: the rewritten executor refuses field interceptors),
// SQL statements (a pgx tracer beside the store's), River jobs (otelriver),
// and each tool call's run in its runtime. Records logged with a span's
// context carry its trace_id and span_id.
//
// As with internal/metrics, the packages that do the work declare the small
// hook they report through (dispatch.Tracer, queue.Opts.Middleware, the pool's
// tracer, server.Opts.Extensions) and hold nil when tracing is off; a nil
// *Tracing returns nil or the thing unwrapped from every method, so off costs
// nothing but a nil check: no exporter, no goroutine, no span. The one thing
// that runs either way is the http_post runtime's injection of a traceparent,
// which does nothing for a context without a span.
//
// No span carries what a client sent as data: not a GraphQL document or its
// variables, not SQL arguments, not a tool call's arguments or result, not
// a token, an actor or a header. Names are bounded: HTTP spans by route,
// GraphQL spans by operation type and first root field, statements by their
// sqlc name or first keyword, tool calls by the tool's registered name.
package tracing
