package event

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
)

// Channel is the NOTIFY channel writers signal new events on (the payload is the
// event id; the hub reads the rows themselves).
const Channel = "scidex_events"

// HubOpts configures a Hub.
type HubOpts struct {
	Pool *pgxpool.Pool
	// Listen is the connection LISTEN uses; it must reach the database directly,
	// never through a transaction-mode pooler, which would lose the listen.
	// Default: the pool's connection settings.
	Listen *pgx.ConnConfig
	Logger *slog.Logger
	// Buffer is each live subscriber's queue length; a subscriber that falls this
	// far behind is dropped. Default DefaultBuffer.
	Buffer int
	// FollowBuffer is the queue length of the server's own followers (Follow):
	// a few subscribers whose drop costs a replay from the log, so they get a
	// deeper queue than a client. Default the larger of Buffer and 1024.
	FollowBuffer int
	// Poll is how often the log is read even without a notification, as a safety
	// net. Default 2s.
	Poll time.Duration
	// Instance, when not 0, is the Consumers' key of this process: the listener
	// holds the advisory lock (ConsumerLockSpace, Instance) on its connection,
	// so that a page a poll here answered counts as arrived (and is committed by
	// the consumer's next poll on another replica) only while this process
	// lives.
	Instance int32
	// Metrics, when set, is told of each event dispatched and each
	// subscriber dropped (internal/metrics); nil when metrics are off.
	Metrics HubMetrics
}

// HubMetrics is what the hub reports as it dispatches.
type HubMetrics interface {
	// EventDispatched is called once per event dispatched, with when it occurred.
	EventDispatched(occurredAt time.Time)
	// SubscriberDropped is called for each subscriber dropped for falling behind.
	SubscriberDropped()
}

// Hub reads each new event once and hands it to every matching subscriber.
type Hub struct {
	opts  HubOpts
	q     *dbsqlc.Queries
	log   *slog.Logger
	wake  chan struct{}
	ready chan struct{}

	// quit is closed when Run ends; stopped then says why subscriptions end.
	quit chan struct{}

	mu      sync.Mutex
	pos     Cursor // every event up to pos has been dispatched
	subs    index  // the live subscribers
	stopped string
	toTell  []*Sub // dispatch's, kept between calls
}

// NewHub returns a hub; Run starts it.
func NewHub(opts HubOpts) *Hub {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Buffer == 0 {
		opts.Buffer = DefaultBuffer
	}
	if opts.FollowBuffer == 0 {
		opts.FollowBuffer = max(opts.Buffer, 1024)
	}
	if opts.Poll == 0 {
		opts.Poll = 2 * time.Second
	}
	if opts.Listen == nil {
		opts.Listen = opts.Pool.Config().ConnConfig.Copy()
		opts.Listen.Tracer = nil
	}
	return &Hub{opts: opts, q: dbsqlc.New(opts.Pool), log: opts.Logger, wake: make(chan struct{}, 1),
		ready: make(chan struct{}), quit: make(chan struct{}), subs: newIndex()}
}

// Ready is closed once the hub knows where the log ends and listens.
func (h *Hub) Ready() <-chan struct{} { return h.ready }

// Position is the cursor of the last event dispatched.
func (h *Hub) Position() Cursor {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pos
}

// Lag is the id of the newest event that may be handed out now and the id
// of the last event dispatched: how far dispatch is behind the log.
func (h *Hub) Lag(ctx context.Context) (newest, dispatched int64, err error) {
	t, err := tail(ctx, h.q)
	if err != nil {
		return 0, 0, err
	}
	pos := h.Position()
	if !pos.Less(t) {
		return t.ID, t.ID, nil // caught up (ids commit out of order: pos may name a higher one)
	}
	return t.ID, pos.ID, nil
}

// DefaultBuffer is HubOpts.Buffer's default.
const DefaultBuffer = 256

// Subscribers is how many live subscribers the hub has.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.subs.len()
}

// Run listens and dispatches until ctx ends. When it returns, every
// subscription has ended with a reason and the listener has closed.
func (h *Hub) Run(ctx context.Context) error {
	defer h.shutdown("the server is shutting down")
	pos, err := tail(ctx, h.q)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.pos = pos
	h.mu.Unlock()
	listening := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		h.listen(ctx, listening)
	}()
	defer wg.Wait()
	select {
	case <-listening:
	case <-ctx.Done():
		return ctx.Err()
	}
	close(h.ready)
	h.dispatchLoop(ctx)
	return nil
}

// listen holds the LISTEN connection: reconnects with backoff, pings when idle,
// and after every (re)connect wakes the dispatcher to catch up on what it missed.
func (h *Hub) listen(ctx context.Context, listening chan struct{}) {
	backoff := 100 * time.Millisecond
	first := true
	for ctx.Err() == nil {
		err := h.listenOnce(ctx, func() {
			if first {
				close(listening)
				first = false
			}
			backoff = 100 * time.Millisecond
			h.poke()
		})
		if ctx.Err() != nil {
			return
		}
		h.log.Warn("event listener disconnected; reconnecting", "err", err, "in", backoff)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (h *Hub) listenOnce(ctx context.Context, connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, h.opts.Listen)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{Channel}.Sanitize()); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if h.opts.Instance != 0 {
		// try: after a reconnect the old connection may hold it a moment longer,
		// which says the same thing.
		if _, err := conn.Exec(ctx, "SELECT pg_try_advisory_lock($1, $2)", ConsumerLockSpace, h.opts.Instance); err != nil {
			return fmt.Errorf("liveness lock: %w", err)
		}
	}
	connected()
	for {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			h.poke()
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			if err := conn.Ping(ctx); err != nil {
				return fmt.Errorf("ping: %w", err)
			}
		default:
			return err
		}
	}
}

func (h *Hub) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// dispatchLoop reads the log after pos whenever woken, when events were held
// back at the horizon (soon), and every Poll interval (a safety net).
func (h *Hub) dispatchLoop(ctx context.Context) {
	poll := time.NewTicker(h.opts.Poll)
	defer poll.Stop()
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		case <-poll.C:
		case <-retry:
		}
		retry = nil
		heldBack, err := h.drain(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			h.log.Warn("event dispatch: read failed; will retry", "err", err)
			retry = time.After(200 * time.Millisecond)
			continue
		}
		if heldBack {
			retry = time.After(20 * time.Millisecond)
		}
	}
}

// admin is who the hub reads as: every event, each then checked per subscriber.
var admin = auth.System()

// drain dispatches every event after pos that may be handed out.
func (h *Hub) drain(ctx context.Context) (heldBack bool, err error) {
	for {
		from := h.Position()
		evs, held, err := page(ctx, h.q, from, admin, 500)
		if err != nil {
			return false, err
		}
		batch := max(1, min(dispatchBatch, h.opts.Buffer/4))
		for rest := evs; len(rest) > 0; {
			n := min(len(rest), batch)
			h.dispatch(rest[:n]...)
			rest = rest[n:]
		}
		if held || len(evs) < 500 {
			return held, nil
		}
	}
}

// dispatchBatch is how many events dispatch hands out at most before it tells
// the subscribers; never more than a quarter of a subscriber's queue
// (HubOpts.Buffer), so a batch does not drop one that keeps up between
// batches.
const dispatchBatch = 32

// dispatch hands out evs, in order, each to the subscribers it may be for,
// and then tells each subscriber that got any of them once. A hub that keeps
// up dispatches one event at a time; one that fell behind (the log holds more
// than it has dispatched) hands each subscriber a run of events, which its
// transport writes together instead of one at a time (wsconn's cork).
func (h *Hub) dispatch(evs ...*Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ready := h.toTell[:0]
	for _, e := range evs {
		if !h.pos.Less(e.Cursor) {
			continue // already dispatched (a page re-read after a retry)
		}
		h.pos = e.Cursor
		if h.opts.Metrics != nil {
			h.opts.Metrics.EventDispatched(e.OccurredAt)
		}
		// Only the subscribers e may be for (index); each is handed e without
		// waiting, so a slow one never holds up the others.
		h.subs.visit(e, func(s *Sub) {
			if !s.wants(e) {
				return
			}
			if s.sink != nil {
				if s.sink.offer(e) {
					if !s.toTell {
						s.toTell = true
						ready = append(ready, s)
					}
					return
				}
			} else {
				select {
				case s.ch <- e:
					return
				default:
				}
			}
			h.subs.remove(s)
			if h.opts.Metrics != nil {
				h.opts.Metrics.SubscriberDropped()
			}
			s.drop(fmt.Sprintf("subscriber fell %d events behind and was dropped; resume with since: %q", s.queue(), s.resume().String()))
		})
	}
	for i, s := range ready {
		s.toTell = false
		ready[i] = nil
		select {
		case <-s.done: // dropped after it was handed an event of this batch
		default:
			s.ready()
		}
	}
	h.toTell = ready[:0]
}

// shutdown ends every subscription with reason, and every later one: a
// subscription still replaying its backlog, or made after Run returned, would
// otherwise wait forever for a live stream that has stopped.
func (h *Hub) shutdown(reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped == "" {
		h.stopped = reason
		close(h.quit)
	}
	for s := range h.subs.all {
		h.subs.remove(s)
		s.drop(reason)
	}
}

// stopReason is why the hub stopped, "" while it runs.
func (h *Hub) stopReason() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stopped
}

func (h *Hub) remove(s *Sub) {
	h.mu.Lock()
	h.subs.remove(s)
	h.mu.Unlock()
}
