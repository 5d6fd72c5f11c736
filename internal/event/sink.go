package event

import "sync"

// Sink queues a subscriber's events in place of Sub.C, with no goroutine
// between the hub and the reader: the hub appends each event to the queue and
// calls SubscribeOpts.Ready; the reader (a transport writing on demand,
// internal/ondemand) calls Next, which converts the oldest event and puts it
// on C, then takes it from C. An idle subscriber with a sink holds an empty
// queue and a channel of one.
type Sink[T any] struct {
	// C has room for one value: Next puts one there, the reader takes it.
	C chan T

	conv func(*Event) T

	mu   sync.Mutex
	q    []*Event      // queued, oldest first; nil when empty
	max  int           // the queue's length (the hub's buffer)
	room chan struct{} // closed when q has room, for a replay that waits; nil unless one does
}

// NewSink returns a sink that converts events with conv.
func NewSink[T any](conv func(*Event) T) *Sink[T] {
	return &Sink[T]{C: make(chan T, 1), conv: conv}
}

// Next puts the oldest queued event, converted, on C and reports whether
// there was one. Call it only when C is empty (the value before taken), from
// one goroutine at a time.
func (k *Sink[T]) Next() bool {
	k.mu.Lock()
	if len(k.q) == 0 {
		k.mu.Unlock()
		return false
	}
	e := k.pop()
	k.mu.Unlock()
	select {
	case k.C <- k.conv(e):
	default: // C is full only if the reader left without taking the last value
	}
	return true
}

// pop takes the oldest queued event off the queue (k.mu held, q not empty).
func (k *Sink[T]) pop() *Event {
	e := k.q[0]
	k.q[0] = nil
	if k.q = k.q[1:]; len(k.q) == 0 {
		k.q = nil // the backing array goes with the burst
	}
	if k.room != nil {
		close(k.room)
		k.room = nil
	}
	return e
}

// sink is a Sink of any type, as the hub holds it.
type sink interface {
	// open sets the queue's length.
	open(n int)
	// offer queues e without waiting; false when the queue is full.
	offer(e *Event) bool
	// send queues e, waiting for room until done or quit closes; false if
	// one did first.
	send(e *Event, done, quit <-chan struct{}) bool
	// oldest is the cursor of the oldest queued event; false when none is.
	oldest() (Cursor, bool)
	// size is the queue's length.
	size() int
	// clear empties the queue: the subscription is over.
	clear()
}

func (k *Sink[T]) open(n int) { k.max = n }

func (k *Sink[T]) offer(e *Event) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.q) >= k.max {
		return false
	}
	k.q = append(k.q, e)
	return true
}

func (k *Sink[T]) send(e *Event, done, quit <-chan struct{}) bool {
	k.mu.Lock()
	for len(k.q) >= k.max {
		if k.room == nil {
			k.room = make(chan struct{})
		}
		room := k.room
		k.mu.Unlock()
		select {
		case <-room:
		case <-done:
			return false
		case <-quit:
			return false
		}
		k.mu.Lock()
	}
	k.q = append(k.q, e)
	k.mu.Unlock()
	return true
}

func (k *Sink[T]) oldest() (Cursor, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.q) == 0 {
		return Cursor{}, false
	}
	return k.q[0].Cursor, true
}

func (k *Sink[T]) size() int { return k.max }

func (k *Sink[T]) clear() {
	k.mu.Lock()
	k.q = nil
	k.mu.Unlock()
}

// before is the cursor just before c: resuming after it delivers c and what
// follows, nothing earlier (no event lies between them, ids being integers).
func before(c Cursor) Cursor {
	if c.ID > 0 {
		c.ID--
	}
	return c
}

// Shared returns the sink as an ondemand.Shared source whose events are
// keyed by group and cursor: the resolver's promise that every subscriber
// with the same group and the same operation gets the same response for the
// same event (group names the reader: its identity and permissions).
func (k *Sink[T]) Shared(group string) *SharedSink[T] {
	return &SharedSink[T]{Sink: k, group: group}
}

// SharedSink is a Sink whose events may be delivered as bytes encoded for
// another subscriber (see Sink.Shared).
type SharedSink[T any] struct {
	*Sink[T]
	group string
}

// sharedKey is what a SharedSink names an event by.
type sharedKey struct {
	group  string
	cursor Cursor
}

// Peek is the key of the oldest queued event.
func (s *SharedSink[T]) Peek() (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.q) == 0 {
		return nil, false
	}
	return sharedKey{s.group, s.q[0].Cursor}, true
}

// Skip drops the oldest queued event.
func (s *SharedSink[T]) Skip() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.q) == 0 {
		return
	}
	s.pop()
}
