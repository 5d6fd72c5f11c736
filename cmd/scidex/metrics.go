package main

import (
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/metrics"
)

// newMetrics is the server's metrics when --metrics-addr is set, with the
// function the bwrap runtime reports sandbox kills to; both nil when it is
// not, so that nothing is recorded.
func newMetrics(addr string) (*metrics.Metrics, func(reason string)) {
	if addr == "" {
		return nil, nil
	}
	m := app.NewMetrics()
	return m, m.SandboxKilled
}
