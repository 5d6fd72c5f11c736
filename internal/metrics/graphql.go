package metrics

import (
	"context"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// GraphQL is a gqlgen handler extension counting operations, their latency
// and their errors (add it with the server's Extensions). It intercepts
// operations and responses, never fields, so it works with the substrate's
// rewritten executor. A nil m returns nil: add nothing.
func (m *Metrics) GraphQL() graphql.HandlerExtension {
	if m == nil {
		return nil
	}
	return gqlMetrics{m}
}

type gqlMetrics struct{ m *Metrics }

var (
	_ graphql.OperationInterceptor = gqlMetrics{}
	_ graphql.ResponseInterceptor  = gqlMetrics{}
)

// counted marks a response's context as one an operation interceptor counts.
type counted struct{}

func (gqlMetrics) ExtensionName() string                   { return "Metrics" }
func (gqlMetrics) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation counts an operation once, by its first response: a
// query's or mutation's only one, a subscription's first event (or its
// refusal). Every response's errors are counted.
func (g gqlMetrics) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	typ, op := OperationLabels(graphql.GetOperationContext(ctx))
	start := time.Now()
	h := next(ctx)
	first := true
	return func(ctx context.Context) *graphql.Response {
		resp := h(context.WithValue(ctx, counted{}, true))
		if resp != nil {
			g.m.countErrors(resp.Errors)
		}
		if first {
			first = false
			status := "ok"
			if resp != nil && len(resp.Errors) > 0 {
				status = "error"
			}
			g.m.gqlOps.WithLabelValues(typ, op, status).Inc()
			if typ != string(ast.Subscription) {
				g.m.gqlDuration.WithLabelValues(typ, op).Observe(time.Since(start).Seconds())
			}
		}
		return resp
	}
}

// InterceptResponse counts what no operation interceptor sees: the answer to
// a request that never became an operation (a document that does not parse
// or validate, a request without a query, one over the depth or cost limit).
func (g gqlMetrics) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if ctx.Value(counted{}) != nil || resp == nil {
		return resp
	}
	typ := "unknown"
	if graphql.HasOperationContext(ctx) {
		if oc := graphql.GetOperationContext(ctx); oc != nil && oc.Operation != nil {
			typ = string(oc.Operation.Operation)
		}
	}
	g.m.gqlOps.WithLabelValues(typ, "invalid", "error").Inc()
	g.m.countErrors(resp.Errors)
	return resp
}

func (m *Metrics) countErrors(errs gqlerror.List) {
	for _, e := range errs {
		code, _ := e.Extensions["code"].(string)
		if !m.codes[code] {
			code = other
		}
		m.gqlErrors.WithLabelValues(code).Inc()
	}
}

// OperationLabels are an operation's type and the name of its first root
// field: a field of the schema, since the document was validated against
// it. Aliases are not names; an operation of introspection fields only is
// "introspection"; one that starts with a fragment is "other". The tracing
// names its GraphQL spans by the same bounded pair.
func OperationLabels(oc *graphql.OperationContext) (typ, op string) {
	if oc == nil || oc.Operation == nil {
		return "unknown", "invalid"
	}
	typ = string(oc.Operation.Operation)
	op = other
	intro := len(oc.Operation.SelectionSet) > 0
	for i, sel := range oc.Operation.SelectionSet {
		f, ok := sel.(*ast.Field)
		if !ok {
			intro = false
			continue
		}
		if !strings.HasPrefix(f.Name, "__") {
			intro = false
		}
		if i == 0 {
			op = f.Name
		}
	}
	if intro {
		op = "introspection"
	}
	return typ, op
}
