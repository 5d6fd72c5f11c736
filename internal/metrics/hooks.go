package metrics

import (
	"time"
)

// SubscriberDropped counts a live subscriber the event hub dropped for falling
// behind (event.HubMetrics).
func (m *Metrics) SubscriberDropped() {
	if m == nil {
		return
	}
	m.hubDrops.Inc()
}

// EventDispatched observes how long after it occurred the hub dispatched an
// event (event.HubMetrics).
func (m *Metrics) EventDispatched(occurredAt time.Time) {
	if m == nil || occurredAt.IsZero() {
		return
	}
	m.eventDelay.Observe(max(time.Since(occurredAt), 0).Seconds())
}

// JobWorked observes one job of the queue: how long it waited to be taken
// and how long its worker ran it (queue.Metrics).
func (m *Metrics) JobWorked(wait, run time.Duration, failed bool) {
	if m == nil {
		return
	}
	m.jobWait.Observe(max(wait, 0).Seconds())
	m.jobDuration.WithLabelValues(status(failed)).Observe(run.Seconds())
}

// ToolCallFinished counts a finished tool call, its duration and its cost
// (dispatch.Metrics). tool is the tool's registered name.
func (m *Metrics) ToolCallFinished(tool, runtime, status string, duration time.Duration, costUSD float64) {
	if m == nil {
		return
	}
	tool, runtime = m.tools.label(tool), m.tools.label(runtime)
	m.toolCalls.WithLabelValues(tool, runtime, status).Inc()
	m.toolDuration.WithLabelValues(tool, runtime).Observe(max(duration, 0).Seconds())
	if costUSD > 0 {
		m.toolCost.WithLabelValues(tool, runtime).Add(costUSD)
	} else {
		m.toolCost.WithLabelValues(tool, runtime).Add(0)
	}
}

// SandboxKilled counts a sandbox killed, by why (a runtimes error code:
// wall_timeout, memory_limit…). Its signature is bwrap.Options.KilledFunc's.
func (m *Metrics) SandboxKilled(reason string) {
	if m == nil {
		return
	}
	m.sandboxKills.WithLabelValues(m.tools.label(reason)).Inc()
}

// MCPCall counts one MCP tools/call of tool, answered after d (mcp.Metrics).
func (m *Metrics) MCPCall(tool string, failed bool, d time.Duration) {
	if m == nil {
		return
	}
	tool = m.mcps.label(tool)
	m.mcpCalls.WithLabelValues(tool, status(failed)).Inc()
	m.mcpDuration.WithLabelValues(tool).Observe(d.Seconds())
}

func status(failed bool) string {
	if failed {
		return "error"
	}
	return "ok"
}
