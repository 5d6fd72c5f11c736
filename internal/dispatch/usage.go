package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolspec"
)

// usage counts calls per tool and persists the counts as the tool's
// usage_count signal (a sum). Calls only add to an in-memory counter; one
// goroutine flushes the counts, one signal per tool per flush, so concurrent
// calls never contend on the tool's signal row inside their own transactions
// (the deadlock the tool runner this replaces had).
type usage struct {
	d       *Dispatcher
	flush   sync.Mutex // one flush at a time, so a flush returns only once every count taken before it is stored
	mu      sync.Mutex
	pending map[string]int
}

func newUsage(d *Dispatcher) *usage {
	return &usage{d: d, pending: map[string]int{}}
}

func (u *usage) add(tool string) {
	u.mu.Lock()
	u.pending[tool]++
	u.mu.Unlock()
}

// Run flushes usage every second until ctx ends, then once more.
func (d *Dispatcher) Run(ctx context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			d.FlushUsage(context.WithoutCancel(ctx))
			return nil
		case <-t.C:
			d.FlushUsage(ctx)
		}
	}
}

// FlushUsage persists the counted calls now. It returns once every call
// counted before it began is stored, including counts another flush, still
// running, had taken.
func (d *Dispatcher) FlushUsage(ctx context.Context) {
	u := d.usage
	u.flush.Lock()
	defer u.flush.Unlock()
	u.mu.Lock()
	counts := u.pending
	u.pending = map[string]int{}
	u.mu.Unlock()
	ctx = request.With(ctx, request.System("tool-usage", time.Now()))
	for tool, n := range counts {
		_, err := d.store.AddSignal(ctx, store.SignalParams{Ref: toolspec.ToolType + ":" + tool, Kind: "usage_count", Value: float64(n)})
		if err != nil {
			d.log.Warn("tool usage: persist failed", "tool", tool, "calls", n, "err", err)
			u.mu.Lock()
			u.pending[tool] += n
			u.mu.Unlock()
		}
	}
}
