package event

import (
	"context"
	"sync"

	"github.com/scidex/substrate/internal/auth"
)

// Sub is one subscriber. Events arrive on C in delivery order (or on its
// Sink's channel, C then being nil); Done closes when the subscription ends,
// Reason says why if the hub ended it.
type Sub struct {
	C     <-chan *Event
	ch    chan *Event
	sink  sink // instead of ch, when SubscribeOpts.Sink is set
	ready func()
	end   func(reason string)
	done  chan struct{}
	actor auth.Actor
	sel   *Selector

	// floor: events at or before it are not for this subscriber (its since may be
	// ahead of this process's hub, e.g. a cursor from another replica).
	floor Cursor

	mu     sync.Mutex
	reason string
	last   Cursor
	once   sync.Once

	// seen is the index stamp of the last dispatch that visited s (the hub's mu).
	seen uint64
	// toTell: a batch being dispatched has queued an event for s (the hub's mu).
	toTell bool
}

// Done is closed when the hub dropped the subscriber (see Reason) or it unsubscribed.
func (s *Sub) Done() <-chan struct{} { return s.done }

// Reason says why the hub ended the subscription ("" if it did not).
func (s *Sub) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// Delivered records the cursor of the last event the consumer took from C (a
// subscriber with a sink need not: the hub names the event before the oldest
// still queued).
func (s *Sub) Delivered(c Cursor) {
	s.mu.Lock()
	if s.last.Less(c) {
		s.last = c
	}
	s.mu.Unlock()
}

func (s *Sub) lastSent() Cursor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func (s *Sub) wants(e *Event) bool {
	return s.floor.Less(e.Cursor) && e.VisibleTo(s.actor) && s.sel.Match(e)
}

func (s *Sub) drop(reason string) {
	s.once.Do(func() {
		s.mu.Lock()
		s.reason = reason
		s.mu.Unlock()
		close(s.done)
		if s.sink != nil {
			s.sink.clear()
			s.end(reason)
		}
	})
}

// queue is the subscriber's queue length.
func (s *Sub) queue() int {
	if s.sink != nil {
		return s.sink.size()
	}
	return cap(s.ch)
}

// resume is the cursor a subscriber dropped for falling behind resumes from:
// the last event handed over, which for a sink is the one before the oldest
// still queued.
func (s *Sub) resume() Cursor {
	if s.sink != nil {
		if c, ok := s.sink.oldest(); ok {
			return before(c)
		}
	}
	return s.lastSent()
}

// SubscribeOpts says who subscribes to what, from where.
type SubscribeOpts struct {
	Actor    auth.Actor
	Selector *Selector
	// Since, when set, replays the events after it, then goes live with no gap and
	// no duplicate at the seam; the zero cursor replays the whole log the actor
	// may see (FromStart). Without it the subscription starts live, now.
	Since *Cursor
	// Sink, when set, queues the events instead of Sub.C (see Sink). Ready
	// is called after each event queued, End once when the subscription
	// ends, with its Reason; both are required with a Sink, and both may run
	// under the hub's lock: they must not block.
	Sink  interface{ sink }
	Ready func()
	End   func(reason string)
	// buffer, when not 0, is the queue length instead of HubOpts.Buffer
	// (Follow's, HubOpts.FollowBuffer).
	buffer int
}

// Subscribe starts a subscription. It returns at once; a backlog (Since) is read
// from the log by the subscriber's own goroutine, which joins the live stream when
// it has caught up with the hub. Cancel ctx to unsubscribe. A subscription made
// after the hub stopped ends at once, with a reason.
func (h *Hub) Subscribe(ctx context.Context, o SubscribeOpts) *Sub {
	n := h.opts.Buffer
	if o.buffer != 0 {
		n = o.buffer
	}
	s := &Sub{done: make(chan struct{}), actor: o.Actor, sel: o.Selector}
	if o.Sink != nil {
		o.Sink.open(n)
		s.sink, s.ready, s.end = o.Sink, o.Ready, o.End
	} else {
		s.ch = make(chan *Event, n)
		s.C = s.ch
	}
	// Unsubscribe when ctx ends. AfterFunc instead of a goroutine waiting on
	// ctx: an idle subscriber costs one goroutine stack less (bench/fanout).
	context.AfterFunc(ctx, func() {
		h.remove(s)
		s.drop("")
	})
	if o.Since != nil {
		// Until the consumer reports taking something, a drop tells it to resume
		// from where it started: never from what was only queued for it.
		s.last = *o.Since
		go h.catchUp(ctx, s, *o.Since)
		return s
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped != "" {
		s.drop(h.stopped)
		return s
	}
	s.last = h.pos
	h.subs.add(s)
	return s
}

// catchUp sends the backlog after from, then registers s with the hub exactly
// where the backlog ends: events up to the hub's position are read from the log,
// later ones arrive live.
func (h *Hub) catchUp(ctx context.Context, s *Sub, from Cursor) {
	// Before Run has read where the log ends, the hub's position means nothing:
	// joining at it would skip what lies between from and the end of the log.
	select {
	case <-h.ready:
	case <-h.quit:
		s.drop(h.stopReason())
		return
	case <-ctx.Done():
		return
	case <-s.done:
		return
	}
	for {
		if h.join(ctx, s, from) {
			return
		}
		h.mu.Lock()
		target := h.pos
		h.mu.Unlock()
		evs, _, err := page(ctx, h.q, from, s.actor, 500)
		if err != nil {
			switch {
			case ctx.Err() != nil: // unsubscribed; not an error
			case h.stopReason() != "":
				s.drop(h.stopReason())
			default:
				s.drop("reading the backlog failed: " + err.Error())
			}
			return
		}
		reached := false
		for _, e := range evs {
			if target.Less(e.Cursor) {
				reached = true // the hub delivers this one, live
				break
			}
			from = e.Cursor
			if !s.sel.Match(e) {
				continue
			}
			if !h.send(ctx, s, e) {
				return
			}
		}
		if reached || len(evs) < 500 {
			// Everything up to target this actor may see has been sent.
			from = target
		}
	}
}

// join registers s with the hub if the backlog up to from is all the hub has
// dispatched; it reports whether the replay is over (joined, or ended: the
// subscriber left or the hub stopped).
func (h *Hub) join(ctx context.Context, s *Sub, from Cursor) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.stopped != "":
		s.drop(h.stopped)
		return true
	case ctx.Err() != nil:
		// The unsubscribe goroutine may already have run its remove: registering
		// now would leave s on the hub for good.
		return true
	case from.Less(h.pos):
		return false
	}
	s.floor = from
	h.subs.add(s)
	return true
}

// send hands a replayed event to s, waiting for room; false when the
// subscription is over (s left, or the hub stopped and dropped it).
func (h *Hub) send(ctx context.Context, s *Sub, e *Event) bool {
	if s.sink != nil {
		// s.done closes when ctx ends (Subscribe's AfterFunc).
		if s.sink.send(e, s.done, h.quit) {
			s.ready()
			return true
		}
	} else {
		select {
		case s.ch <- e:
			return true
		case <-ctx.Done():
			return false
		case <-s.done:
			return false
		case <-h.quit:
		}
	}
	select {
	case <-h.quit:
		s.drop(h.stopReason())
	default:
	}
	return false
}
