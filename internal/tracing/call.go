package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of the tool call spans: OpenTelemetry's generative-AI
// conventions for a tool's execution, and the substrate's own.
const (
	attrGenAIOperation = attribute.Key("gen_ai.operation.name")
	attrToolName       = attribute.Key("gen_ai.tool.name")
	attrToolCallID     = attribute.Key("gen_ai.tool.call.id")
	attrToolVersion    = attribute.Key("scidex.tool.version")
	attrToolRuntime    = attribute.Key("scidex.tool.runtime")
	attrCallStatus     = attribute.Key("scidex.tool_call.status")
	attrCallCost       = attribute.Key("scidex.tool_call.cost_usd")
	attrErrorType      = attribute.Key("error.type")
)

// StartCall starts the span of one runtime call (dispatch.Tracer): "execute_tool
// <tool>", a child of the request or job that runs it, carried by the context
// it returns into the runtime (the http_post runtime sends it on as a
// traceparent). end is called once, when the call's outcome is settled, with
// its status (succeeded, failed, cancelled, queued for outside work), its
// cost and, on failure, its error code. Neither the arguments nor the
// result are recorded. A nil t returns ctx and a no-op.
func (t *Tracing) StartCall(ctx context.Context, tool, version, runtime, callID string) (context.Context, func(status string, costUSD float64, errCode string)) {
	if t == nil {
		return ctx, func(string, float64, string) {}
	}
	ctx, span := t.tracer.Start(ctx, "execute_tool "+tool, trace.WithAttributes(
		attrGenAIOperation.String("execute_tool"), attrToolName.String(tool), attrToolCallID.String(callID),
		attrToolVersion.String(version), attrToolRuntime.String(runtime)))
	return ctx, func(status string, costUSD float64, errCode string) {
		span.SetAttributes(attrCallStatus.String(status), attrCallCost.Float64(costUSD))
		if errCode != "" {
			span.SetAttributes(attrErrorType.String(errCode))
			span.SetStatus(codes.Error, errCode)
		}
		span.End()
	}
}
