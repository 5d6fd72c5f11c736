package dispatch

import (
	"context"

	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/ref"
)

// WatchCancels stops calls running in this process when any process cancels
// them: cancelToolCall writes a tool_call.cancelled event, which every
// replica's hub receives. A queued job is cancelled through the queue as well;
// this reaches the synchronous calls no queue knows of. It returns when ctx
// ends or the hub stops.
//
// It subscribes before it returns and watches on its own goroutine (run), so
// the subscription exists once the caller's start is done.
func (d *Dispatcher) WatchCancels(ctx context.Context, hub *event.Hub) (run func() error, err error) {
	sel, err := event.NewSelector([]string{EventCancelled}, nil, "")
	if err != nil {
		return nil, err
	}
	return hub.Follow(ctx, sel, func(e *event.Event) {
		if e.Ref == nil {
			return
		}
		if r, err := ref.Parse(*e.Ref); err == nil && r.Type == CallType {
			d.stopLocal(r.ID)
		}
	}), nil
}
