package tracing

import (
	"context"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/scidex/substrate/internal/metrics"
	"github.com/scidex/substrate/internal/request"
)

// GraphQL is a gqlgen handler extension giving each GraphQL operation a span
// (add it with the server's Extensions). It intercepts operations, never
// fields, so it works with the substrate's rewritten executor; the
// statements and tool calls an operation makes are its children. A nil t
// returns nil: add nothing.
//
// A span is named by the operation's type and first root field ("mutation
// invokeTool"), the bounded pair the metrics use, and carries the request
// id and the error codes of the response (extensions.code), never the
// document, its variables or the actor. A query's or mutation's span ends
// with its response. A subscription's span is its subscribe: it ends with
// its first response (the first event, or the refusal), as the metrics count
// it; the events after are not traced, so a subscription open for hours is
// not a span open for hours after its first event, and a feed of thousands
// of events is not thousands of spans.
func (t *Tracing) GraphQL() graphql.HandlerExtension {
	if t == nil {
		return nil
	}
	return gqlTracing{t}
}

type gqlTracing struct{ t *Tracing }

var (
	_ graphql.OperationInterceptor = gqlTracing{}
	_ graphql.ResponseInterceptor  = gqlTracing{}
)

// traced marks a response's context as one an operation span covers.
type traced struct{}

func (gqlTracing) ExtensionName() string                   { return "Tracing" }
func (gqlTracing) Validate(graphql.ExecutableSchema) error { return nil }

// Attribute keys of the GraphQL spans.
const (
	attrOpType     = attribute.Key("graphql.operation.type")
	attrOpName     = attribute.Key("graphql.operation.name")
	attrRootField  = attribute.Key("scidex.graphql.root_field")
	attrRequestID  = attribute.Key("scidex.request_id")
	attrErrorCodes = attribute.Key("scidex.graphql.error_codes")
)

func (g gqlTracing) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	typ, field := metrics.OperationLabels(oc)
	attrs := []attribute.KeyValue{attrOpType.String(typ), attrRootField.String(field)}
	if oc != nil && oc.OperationName != "" {
		attrs = append(attrs, attrOpName.String(oc.OperationName))
	}
	if rid := request.IDFrom(ctx); rid != "" {
		attrs = append(attrs, attrRequestID.String(rid))
	}
	ctx, span := g.t.tracer.Start(ctx, typ+" "+field, trace.WithAttributes(attrs...))
	h := next(ctx)
	first := true
	return func(rctx context.Context) *graphql.Response {
		if !first {
			return h(rctx)
		}
		first = false
		resp := h(context.WithValue(rctx, traced{}, true))
		if resp != nil {
			setErrors(span, resp.Errors)
		}
		span.End()
		return resp
	}
}

// InterceptResponse notes on the request's span (the HTTP one) the errors of
// an answer no operation span covers: a document that does not parse or
// validate, one over the depth or cost limit.
func (g gqlTracing) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if ctx.Value(traced{}) != nil || resp == nil || len(resp.Errors) == 0 {
		return resp
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		typ := "unknown"
		if graphql.HasOperationContext(ctx) {
			if oc := graphql.GetOperationContext(ctx); oc != nil && oc.Operation != nil {
				typ = string(oc.Operation.Operation)
			}
		}
		span.AddEvent("graphql.invalid", trace.WithAttributes(attrOpType.String(typ), attrErrorCodes.StringSlice(errorCodes(resp.Errors))))
	}
	return resp
}

// setErrors records the codes of errs on span and marks it failed.
func setErrors(span trace.Span, errs gqlerror.List) {
	if len(errs) == 0 {
		return
	}
	span.SetAttributes(attrErrorCodes.StringSlice(errorCodes(errs)))
	// The status says how many, not what: a message may quote the client's
	// input.
	span.SetStatus(codes.Error, strconv.Itoa(len(errs))+" errors")
}

// errorCodes are the errors' extensions.code values, each once, in order.
func errorCodes(errs gqlerror.List) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range errs {
		code, _ := e.Extensions["code"].(string)
		if code == "" {
			code = "unknown"
		}
		if !seen[code] {
			seen[code] = true
			out = append(out, code)
		}
	}
	return out
}
