package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
)

// progressEvery is the most often a call's progress becomes an event: a tool
// reporting in a tight loop must not flood the log.
const progressEvery = 100 * time.Millisecond

// progress returns the callback a runtime reports a call's progress to: each
// report is a tool_call.progress event on the call (so toolCallUpdates and
// events carry it), at most one per progressEvery; reports in between are
// dropped except the last, which is sent when the next slot comes.
func (d *Dispatcher) progress(ctx context.Context, call *store.Artifact) func(runtimes.Progress) {
	var (
		mu      sync.Mutex
		last    time.Time
		pending *runtimes.Progress
		timer   *time.Timer
	)
	ctx = context.WithoutCancel(ctx)
	send := func(p runtimes.Progress) {
		payload := map[string]any{"ref": call.Ref().String(), "message": p.Message}
		if p.Fraction != nil {
			payload["fraction"] = *p.Fraction
		}
		if len(p.Data) > 0 {
			payload["data"] = p.Data
		}
		if err := d.store.ServerEvent(ctx, "invokeTool", store.EventParams{Type: EventProgress, Ref: call.Ref().String(), Payload: payload}); err != nil {
			d.log.Warn("tool call progress event failed", "call", call.ID, "err", err)
		}
	}
	return func(p runtimes.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if wait := progressEvery - time.Since(last); wait > 0 {
			if pending == nil {
				timer = time.AfterFunc(wait, func() {
					mu.Lock()
					q := pending
					pending, last = nil, time.Now()
					mu.Unlock()
					if q != nil {
						send(*q)
					}
				})
			}
			pending = &p
			_ = timer
			return
		}
		last = time.Now()
		go send(p)
	}
}
