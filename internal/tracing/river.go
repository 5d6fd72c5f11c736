package tracing

import (
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	"go.opentelemetry.io/otel/metric/noop"
)

// River is the job queue's middleware (rivercontrib/otelriver): a producer
// span "river.insert_many" where a job is inserted (within the request that
// queued the call), and a consumer span "river.work/tool_call" where a
// worker runs it, the root of its own trace with a link back to the insert
// (a job may run long after, on another process: a link, not a parent, as
// otelriver chooses). The trace context rides in the job's metadata. Span
// attributes are River's: kind, queue, attempt, priority, job id, status;
// never the job's arguments. Nil when tracing is off.
func (t *Tracing) River() []rivertype.Middleware {
	if t == nil {
		return nil
	}
	return []rivertype.Middleware{otelriver.NewMiddleware(&otelriver.MiddlewareConfig{
		TracerProvider:              t.tp,
		MeterProvider:               noop.NewMeterProvider(), // the queue's metrics are internal/metrics'
		EnableTracePropagation:      true,
		EnableWorkSpanJobKindSuffix: true,
	})}
}
