package event

// Sink receives a subscriber's events in place of Sub.C, with no goroutine
// between the hub and the reader: the hub converts each event itself, puts it
// on C and calls ready, so that a transport writing on demand
// (internal/ondemand) delivers it. An idle subscriber with a sink costs its
// queue and nothing else.
type Sink[T any] struct {
	// C is the queue, of the hub's buffer length; hand it to the reader.
	C chan T

	conv   func(*Event) T
	cursor func(T) Cursor
	ready  func()
	end    func(reason string)
}

// NewSink returns a sink that converts events with conv, calls ready after
// putting each on C and end once when the subscription ends (reason as
// Sub.Reason: "" when the subscriber left, else why the hub ended it).
// cursor is the cursor of a converted event (the hub names where to resume
// when it drops a subscriber that fell behind). ready and end run with the
// hub's lock held: they must not block.
func NewSink[T any](conv func(*Event) T, cursor func(T) Cursor, ready func(), end func(reason string)) *Sink[T] {
	return &Sink[T]{conv: conv, cursor: cursor, ready: ready, end: end}
}

// sink is a Sink of any type, as the hub holds it.
type sink interface {
	// open makes the queue, n long.
	open(n int)
	// offer queues e without waiting; false when the queue is full.
	offer(e *Event) bool
	// send queues e, waiting for room until done or quit closes; false if
	// one did first.
	send(e *Event, done, quit <-chan struct{}) bool
	// oldest takes the oldest queued event off the queue and returns its
	// cursor; false when the queue is empty.
	oldest() (Cursor, bool)
	// size is the queue's length.
	size() int
	// ended is called once, when the subscription ends.
	ended(reason string)
}

func (k *Sink[T]) open(n int) { k.C = make(chan T, n) }

func (k *Sink[T]) offer(e *Event) bool {
	if len(k.C) == cap(k.C) {
		return false // only the hub sends, so this is not a race
	}
	k.C <- k.conv(e)
	k.ready()
	return true
}

func (k *Sink[T]) send(e *Event, done, quit <-chan struct{}) bool {
	select {
	case k.C <- k.conv(e):
		k.ready()
		return true
	case <-done:
		return false
	case <-quit:
		return false
	}
}

func (k *Sink[T]) oldest() (Cursor, bool) {
	select {
	case v := <-k.C:
		return k.cursor(v), true
	default:
		return Cursor{}, false
	}
}

func (k *Sink[T]) size() int { return cap(k.C) }

func (k *Sink[T]) ended(reason string) { k.end(reason) }

// before is the cursor just before c: resuming after it delivers c and what
// follows, nothing earlier (no event lies between them, ids being integers).
func before(c Cursor) Cursor {
	if c.ID > 0 {
		c.ID--
	}
	return c
}
