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

// reporter turns a running call's progress reports into tool_call.progress
// events (so toolCallUpdates and events carry them), at most one per
// progressEvery; of the reports in between only the last is kept, and sent
// when its slot comes. Close sends what is pending and waits for every send:
// a call's progress events all come before its finish event.
type reporter struct {
	d    *Dispatcher
	ctx  context.Context
	call *store.Artifact

	mu      sync.Mutex
	last    time.Time
	pending *runtimes.Progress
	timer   *time.Timer
	closed  bool
	sends   sync.WaitGroup
}

func (d *Dispatcher) reporter(ctx context.Context, call *store.Artifact) *reporter {
	return &reporter{d: d, ctx: context.WithoutCancel(ctx), call: call}
}

// Report is the runtime's Call.Progress: it returns at once.
func (r *reporter) Report(p runtimes.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if wait := progressEvery - time.Since(r.last); wait > 0 {
		if r.pending == nil {
			r.timer = time.AfterFunc(wait, r.flushPending)
		}
		r.pending = &p
		return
	}
	r.last = time.Now()
	r.sends.Add(1)
	go func() {
		defer r.sends.Done()
		r.send(p)
	}()
}

func (r *reporter) flushPending() {
	r.mu.Lock()
	p := r.pending
	r.pending, r.last = nil, time.Now()
	if p != nil {
		r.sends.Add(1)
	}
	r.mu.Unlock()
	if p != nil {
		defer r.sends.Done()
		r.send(*p)
	}
}

// Close stops reporting, sends the pending report and waits for the sends.
func (r *reporter) Close() {
	r.mu.Lock()
	r.closed = true
	// Take the pending report whether or not the timer already fired: a
	// flush that fired but has not taken the lock yet then finds nothing, and
	// one that took it first has counted its send, which Wait waits for.
	if r.timer != nil {
		r.timer.Stop()
	}
	p := r.pending
	r.pending = nil
	r.mu.Unlock()
	if p != nil {
		r.send(*p)
	}
	r.sends.Wait()
}

func (r *reporter) send(p runtimes.Progress) {
	payload := map[string]any{"ref": r.call.Ref().String(), "message": p.Message}
	if p.Fraction != nil {
		payload["fraction"] = *p.Fraction
	}
	if len(p.Data) > 0 {
		payload["data"] = p.Data
	}
	if err := r.d.store.ServerEvent(r.ctx, "invokeTool", store.EventParams{Type: EventProgress, Ref: r.call.Ref().String(), Payload: payload}); err != nil {
		r.d.log.Warn("tool call progress event failed", "call", r.call.ID, "err", err)
	}
}
