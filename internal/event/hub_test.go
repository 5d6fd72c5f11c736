package event_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/event"
)

// wait bounds every wait for the hub's asynchronous work. It is a failure bound
// only: tests wait on the hub's channels and never sleep to let work happen.
const wait = 30 * time.Second

// runHub starts a hub on e's database and waits until it listens. stop cancels
// Run's context and returns what Run returned; the test's cleanup stops it too.
func runHub(t *testing.T, e *env, o event.HubOpts) (h *event.Hub, stop func() error) {
	t.Helper()
	h = newHub(e, o)
	return h, startHub(t, h)
}

func newHub(e *env, o event.HubOpts) *event.Hub {
	o.Pool = e.pool
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return event.NewHub(o)
}

// startHub runs a hub made with newHub; see runHub.
func startHub(t *testing.T, h *event.Hub) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(wait):
				runErr = fmt.Errorf("Run did not return within %s of its context ending", wait)
			}
		})
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("hub: %v", err)
		}
	})
	select {
	case <-h.Ready():
	case err := <-done:
		done <- err // for stop
		t.Fatalf("hub stopped before it listened: %v", err)
	case <-time.After(wait):
		t.Fatalf("hub did not listen within %s", wait)
	}
	return stop
}

// next is the subscription's next event; the test fails if none comes.
func next(t *testing.T, s *event.Sub, who string) *event.Event {
	t.Helper()
	select {
	case ev := <-s.C:
		return ev
	default:
	}
	select {
	case ev := <-s.C:
		return ev
	case <-s.Done():
		t.Fatalf("%s: subscription ended while an event was due: %q", who, s.Reason())
	case <-time.After(wait):
		t.Fatalf("%s: no event within %s", who, wait)
	}
	return nil
}

// take is the subscription's next n events.
func take(t *testing.T, s *event.Sub, who string, n int) []*event.Event {
	t.Helper()
	out := make([]*event.Event, 0, n)
	for range n {
		out = append(out, next(t, s, who))
	}
	return out
}

// waitDone waits for a subscription to end.
func waitDone(t *testing.T, s *event.Sub, who string) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(wait):
		t.Fatalf("%s: subscription did not end within %s", who, wait)
	}
}

// waitFor polls cond until it holds. It is only for state the hub gives no signal
// for (a backlog subscriber joining the live stream, a buffer filling).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(wait)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s: not within %s", what, wait)
		}
	}
}

// writeEvent commits one event of the given type in a transaction of its own,
// the way the store does: the row, then a NOTIFY carrying its id.
func writeEvent(ctx context.Context, pool *pgxpool.Pool, typ string) (int64, error) {
	var id int64
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		id, err = insertEvent(ctx, tx, typ)
		return err
	})
	return id, err
}

func insertEvent(ctx context.Context, tx pgx.Tx, typ string) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO events (event_type, occurred_at, source, actor_id, actor_kind, ref, payload)
		VALUES ($1, now(), 'test', 'alice', 'human', 'hypothesis:h1', '{}') RETURNING id`, typ).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert event: %w", err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", event.Channel, strconv.FormatInt(id, 10)); err != nil {
		return 0, fmt.Errorf("notify: %w", err)
	}
	return id, nil
}

// writeMany commits n transactions of one or two events each. Half of them take
// their transaction id before the event's sequence id, so that under concurrent
// writers ids commit out of order and (xid, id) order differs from id order.
func writeMany(ctx context.Context, pool *pgxpool.Pool, n int) error {
	for i := range n {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if i%2 == 0 {
				if _, err := tx.Exec(ctx, "SELECT pg_current_xact_id()"); err != nil {
					return err
				}
			}
			if _, err := insertEvent(ctx, tx, "hypothesis.created"); err != nil {
				return err
			}
			if i%10 == 0 {
				if _, err := insertEvent(ctx, tx, "hypothesis.updated"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("transaction %d: %w", i, err)
		}
	}
	return nil
}

// logAfter is the event log after a cursor, in delivery order, read from the
// table. The columns are qualified: unqualified, ORDER BY xid would sort by the
// text output column of that name.
func logAfter(t *testing.T, e *env, since event.Cursor) []event.Cursor {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT e.xid::text, e.id FROM events e
		WHERE (e.xid, e.id) > ($1::text::xid8, $2::bigint) ORDER BY e.xid, e.id`, strconv.FormatUint(since.XID, 10), since.ID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (event.Cursor, error) {
		var x string
		var c event.Cursor
		if err := r.Scan(&x, &c.ID); err != nil {
			return c, err
		}
		c.XID, err = strconv.ParseUint(x, 10, 64)
		return c, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkStream compares what a subscriber received with what it should have, and
// says what is missing, doubled, extra or out of order.
func checkStream(t *testing.T, who string, got []*event.Event, want []event.Cursor) {
	t.Helper()
	seen := map[int64]int{}
	for _, ev := range got {
		seen[ev.Cursor.ID]++
	}
	wanted := map[int64]bool{}
	var missing, doubled, extra []int64
	for _, c := range want {
		wanted[c.ID] = true
		if seen[c.ID] == 0 {
			missing = append(missing, c.ID)
		}
	}
	for _, ev := range got {
		id := ev.Cursor.ID
		if seen[id] > 1 {
			doubled = append(doubled, id)
			seen[id] = 1 // report once
		}
		if !wanted[id] {
			extra = append(extra, id)
		}
	}
	if len(missing)+len(doubled)+len(extra) > 0 {
		t.Errorf("%s: received %d events, want %d; missing %v, doubled %v, not in the log after its start %v",
			who, len(got), len(want), missing, doubled, extra)
		return
	}
	for i, ev := range got {
		if ev.Cursor != want[i] {
			t.Errorf("%s: event %d is %+v, want %+v: not in cursor order", who, i, ev.Cursor, want[i])
			return
		}
	}
}

// A live subscriber receives what commits after it subscribed, in cursor order
// (a transaction that took its id first comes first even if it commits last),
// once each, filtered by its selector and by what its actor may see.
func TestHubLiveDelivery(t *testing.T) {
	e := newEnv(t)
	h, _ := runHub(t, e, event.HubOpts{})
	ctx := t.Context()

	// An event the hub has already dispatched is not one a new subscriber gets.
	early := h.Subscribe(ctx, event.SubscribeOpts{Actor: admin})
	before := commitOne(t, e, "hypothesis.created")
	if got := next(t, early, "early").Cursor.ID; got != before {
		t.Fatalf("early subscriber got %d, want %d", got, before)
	}
	from := h.Position()
	hyp, err := event.NewSelector([]string{"hypothesis.*"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	subs := map[string]*event.Sub{
		"admin":            h.Subscribe(ctx, event.SubscribeOpts{Actor: admin}),
		"bob":              h.Subscribe(ctx, event.SubscribeOpts{Actor: bob}),
		"bob hypothesis.*": h.Subscribe(ctx, event.SubscribeOpts{Actor: bob, Selector: hyp}),
	}

	begin := func() pgx.Tx {
		t.Helper()
		tx, err := e.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tx.Rollback(context.Background()) }) //nolint:errcheck
		if _, err := tx.Exec(ctx, "SELECT pg_current_xact_id()"); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	h1 := commitOne(t, e, "hypothesis.created")
	toCarol := commitOne(t, e, "message.created", "alice", "carol")
	// P, then A take their transaction ids; B commits an event; P writes and
	// commits. P's event may go out (no older transaction runs), B's must wait
	// for A, which has not written yet: A's event, when it comes, sorts first.
	p, a := begin(), begin()
	bID := commitOne(t, e, "hypothesis.updated")
	pID := insert(ctx, t, p, "hypothesis.noted", `{}`, nil)
	if err := p.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string][]int64{
		"admin":            {h1, toCarol, pID},
		"bob":              {h1, pID},
		"bob hypothesis.*": {h1, pID},
	}
	got := map[string][]*event.Event{}
	// Once P's event is here the hub has read the log after B committed, and held
	// B back.
	for name, s := range subs {
		got[name] = take(t, s, name, len(want[name]))
	}
	aID := insert(ctx, t, a, "paper.created", `{}`, nil)
	if err := a.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	sys := commitOne(t, e, "system.maintenance")
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	two1 := insert(ctx, t, tx, "hypothesis.created", `{}`, nil)
	two2 := insert(ctx, t, tx, "hypothesis.created", `{}`, nil)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	last := commitOne(t, e, "hypothesis.closed")
	for name, rest := range map[string][]int64{
		"admin":            {aID, bID, sys, two1, two2, last},
		"bob":              {aID, bID, two1, two2, last},
		"bob hypothesis.*": {bID, two1, two2, last},
	} {
		want[name] = append(want[name], rest...)
		got[name] = append(got[name], take(t, subs[name], name, len(rest))...)
	}

	var logIDs []int64
	for _, c := range logAfter(t, e, from) {
		logIDs = append(logIDs, c.ID)
	}
	if fmt.Sprint(logIDs) != fmt.Sprint(want["admin"]) {
		t.Fatalf("test setup: the log after the start is %v, want %v", logIDs, want["admin"])
	}
	for name, evs := range got {
		if fmt.Sprint(ids(evs)) != fmt.Sprint(want[name]) {
			t.Errorf("%s received %v, want %v", name, ids(evs), want[name])
		}
		for i := 1; i < len(evs); i++ {
			if !evs[i-1].Cursor.Less(evs[i].Cursor) {
				t.Errorf("%s: cursor %+v after %+v", name, evs[i].Cursor, evs[i-1].Cursor)
			}
		}
	}
	// Exactly once: nothing more came, so the next event is the next one written.
	marker := commitOne(t, e, "hypothesis.marked")
	for name, s := range subs {
		if got := next(t, s, name).Cursor.ID; got != marker {
			t.Errorf("%s: after the last event came %d, want the marker %d", name, got, marker)
		}
	}
}

// Subscribers that resume from a cursor while four writers commit concurrently
// get every later event once, in order: the replay from the log and the live
// stream meet without a gap or a duplicate.
func TestHubSeam(t *testing.T) {
	const writers, perWriter = 4, 200
	e := newEnv(t)
	h, _ := runHub(t, e, event.HubOpts{Buffer: 1 << 14})
	ctx := t.Context()
	live := h.Subscribe(ctx, event.SubscribeOpts{Actor: admin})
	from := h.Position()

	writeErr := make(chan error, writers)
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			writeErr <- writeMany(ctx, e.pool, perWriter)
		}()
	}
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()

	// Resume from the cursor of the live subscriber's 40th, 200th and 400th event,
	// as a client that reconnects with the last cursor it saw.
	type resumer struct {
		since  event.Cursor
		sub    *event.Sub
		during bool // started while the writers were still writing
		got    []*event.Event
		err    error
		done   chan struct{}
	}
	var resumers []*resumer
	resumeAt := map[int]bool{40: true, 200: true, 400: true}
	var liveGot []*event.Event
	var lastID int64
	writing := true
receive:
	for {
		select {
		case ev := <-live.C:
			liveGot = append(liveGot, ev)
			if resumeAt[len(liveGot)] {
				r := &resumer{since: ev.Cursor, during: writing, done: make(chan struct{})}
				r.sub = h.Subscribe(ctx, event.SubscribeOpts{Actor: admin, Since: &r.since})
				resumers = append(resumers, r)
				go func() {
					defer close(r.done)
					r.got, r.err = collect(r.sub, "test.sentinel")
				}()
			}
			if ev.Type == "test.sentinel" {
				break receive
			}
		case <-writersDone:
			writersDone, writing = nil, false
			t.Logf("when the writers finished, %d of %d resuming subscribers had joined the live stream",
				h.Subscribers()-1, len(resumers))
			for range writers {
				if err := <-writeErr; err != nil {
					t.Fatal(err)
				}
			}
			lastID = commitOne(t, e, "test.sentinel")
		case <-live.Done():
			t.Fatalf("live subscriber ended after %d events: %q", len(liveGot), live.Reason())
		case <-time.After(wait):
			t.Fatalf("live subscriber: no event within %s (after %d)", wait, len(liveGot))
		}
	}
	if len(resumers) != len(resumeAt) {
		t.Fatalf("started %d resuming subscribers, want %d (live got %d events)", len(resumers), len(resumeAt), len(liveGot))
	}

	logFrom := logAfter(t, e, from)
	if n := len(logFrom); n < writers*perWriter {
		t.Fatalf("test setup: %d events in the log, want at least %d", n, writers*perWriter)
	}
	checkStream(t, "live", liveGot, logFrom)
	for i, r := range resumers {
		select {
		case <-r.done:
		case <-time.After(2 * wait):
			t.Fatalf("resumer %d did not finish", i)
		}
		who := fmt.Sprintf("resumer %d (since event %d, started during writes: %v)", i, r.since.ID, r.during)
		if r.err != nil {
			t.Errorf("%s: %v", who, r.err)
		}
		checkStream(t, who, r.got, logAfter(t, e, r.since))
	}
	if t.Failed() {
		return
	}
	// Nothing comes twice after the sentinel either: the next event is the next one written.
	marker := commitOne(t, e, "hypothesis.marked")
	for i, r := range append([]*resumer{{sub: live}}, resumers...) {
		if got := next(t, r.sub, "subscriber").Cursor.ID; got != marker {
			t.Errorf("subscriber %d: after the sentinel %d came %d, want the marker %d", i, lastID, got, marker)
		}
	}
}

// collect reads a subscription until an event of type until.
func collect(s *event.Sub, until string) ([]*event.Event, error) {
	var got []*event.Event
	for {
		select {
		case ev := <-s.C:
			got = append(got, ev)
			if ev.Type == until {
				return got, nil
			}
		case <-s.Done():
			return got, fmt.Errorf("ended after %d events: %q", len(got), s.Reason())
		case <-time.After(wait):
			return got, fmt.Errorf("no event within %s (after %d)", wait, len(got))
		}
	}
}

var resumeRE = regexp.MustCompile(`since: "([^"]+)"`)

// A subscriber that stops reading is dropped with a reason once its buffer is
// full, and told to resume after the last event it took; a reading subscriber on
// the same hub goes on receiving everything.
func TestHubDropsSlowSubscriber(t *testing.T) {
	const buffer = 8
	e := newEnv(t)
	h, _ := runHub(t, e, event.HubOpts{Buffer: buffer})
	ctx := t.Context()
	reader := h.Subscribe(ctx, event.SubscribeOpts{Actor: admin})
	c0 := h.Position()
	var backlog []*event.Event
	for range 3 {
		id := commitOne(t, e, "hypothesis.created")
		ev := next(t, reader, "reader")
		if ev.Cursor.ID != id {
			t.Fatalf("reader got %d, want %d", ev.Cursor.ID, id)
		}
		backlog = append(backlog, ev)
	}

	// The slow subscriber resumes from before those three: it takes two of them,
	// saying so, and then reads nothing more.
	slow := h.Subscribe(ctx, event.SubscribeOpts{Actor: admin, Since: &c0})
	for i := range 2 {
		ev := next(t, slow, "slow")
		if ev.Cursor != backlog[i].Cursor {
			t.Fatalf("slow subscriber's backlog event %d is %+v, want %+v", i, ev.Cursor, backlog[i].Cursor)
		}
		slow.Delivered(ev.Cursor)
	}
	waitFor(t, "the slow subscriber joins the live stream", func() bool { return h.Subscribers() == 2 })

	var written []int64
	for range 3 * buffer {
		id := commitOne(t, e, "hypothesis.created")
		if got := next(t, reader, "reader").Cursor.ID; got != id {
			t.Fatalf("reader got %d, want %d (after %d live events)", got, id, len(written))
		}
		written = append(written, id)
	}
	waitDone(t, slow, "slow subscriber")
	reason := slow.Reason()
	if reason == "" {
		t.Fatal("the slow subscriber was ended without a reason")
	}
	if n := h.Subscribers(); n != 1 {
		t.Errorf("after the drop the hub has %d subscribers, want 1", n)
	}
	// What it was handed is, in order, the backlog event it had not taken and then
	// live events until its buffer was full.
	var queued []int64
	for len(slow.C) > 0 {
		queued = append(queued, (<-slow.C).Cursor.ID)
	}
	wantQueued := append([]int64{backlog[2].Cursor.ID}, written[:buffer-1]...)
	if fmt.Sprint(queued) != fmt.Sprint(wantQueued) {
		t.Errorf("the slow subscriber was handed %v, want %v", queued, wantQueued)
	}
	// It resumes after the last event it took, not after what was only queued.
	m := resumeRE.FindStringSubmatch(reason)
	if m == nil {
		t.Fatalf("reason %q names no cursor to resume from", reason)
	}
	resume, err := event.ParseCursor(m[1], "since")
	if err != nil {
		t.Fatalf("reason %q: %v", reason, err)
	}
	if resume != backlog[1].Cursor {
		t.Errorf("reason says resume since %+v, want %+v (the last event it took)", resume, backlog[1].Cursor)
	}
	// The reader is not stalled.
	id := commitOne(t, e, "hypothesis.created")
	if got := next(t, reader, "reader").Cursor.ID; got != id {
		t.Errorf("after the drop the reader got %d, want %d", got, id)
	}
}

// When the hub's LISTEN connection dies, it reconnects and catches up from the
// log: events written while nothing listened arrive, and so do later ones. Poll
// is an hour, so nothing but the reconnect can deliver them.
func TestHubListenerReconnect(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	// The listener's dials pass until the test arms the gate; then the next dial
	// says so and waits for the gate to open, so the test knows the listener is
	// down while it writes.
	lc := e.pool.Config().ConnConfig.Copy()
	var armed atomic.Bool
	redialing, gate := make(chan struct{}), make(chan struct{})
	var redialOnce sync.Once
	dial := lc.DialFunc
	lc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if armed.Load() {
			redialOnce.Do(func() { close(redialing) })
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return dial(ctx, network, addr)
	}
	h, _ := runHub(t, e, event.HubOpts{Listen: lc, Poll: time.Hour})
	sub := h.Subscribe(ctx, event.SubscribeOpts{Actor: admin})
	first := commitOne(t, e, "hypothesis.created")
	if got := next(t, sub, "sub").Cursor.ID; got != first {
		t.Fatalf("got %d, want %d", got, first)
	}

	listener := func() []int32 {
		rows, err := e.pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`)
		if err != nil {
			t.Fatal(err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			t.Fatal(err)
		}
		return pids
	}
	pids := listener()
	if len(pids) != 1 {
		t.Fatalf("LISTEN backends: %v, want one", pids)
	}
	armed.Store(true)
	var killed bool
	if err := e.pool.QueryRow(ctx, "SELECT pg_terminate_backend($1)", pids[0]).Scan(&killed); err != nil || !killed {
		t.Fatalf("terminate the listener: %v %v", killed, err)
	}
	select {
	case <-redialing:
	case <-time.After(wait):
		t.Fatalf("the hub did not try to reconnect within %s", wait)
	}

	var down []int64
	for range 5 {
		down = append(down, commitOne(t, e, "hypothesis.created"))
	}
	close(gate)
	if got := ids(take(t, sub, "sub", len(down))); fmt.Sprint(got) != fmt.Sprint(down) {
		t.Fatalf("events written while the listener was down: got %v, want %v", got, down)
	}
	if p := listener(); len(p) != 1 || p[0] == pids[0] {
		t.Errorf("LISTEN backends after the reconnect: %v (the killed one was %d)", p, pids[0])
	}
	var after []int64
	for range 5 {
		after = append(after, commitOne(t, e, "hypothesis.created"))
	}
	if got := ids(take(t, sub, "sub", len(after))); fmt.Sprint(got) != fmt.Sprint(after) {
		t.Fatalf("events written after the reconnect: got %v, want %v", got, after)
	}
	marker := commitOne(t, e, "hypothesis.marked")
	if got := next(t, sub, "sub").Cursor.ID; got != marker {
		t.Errorf("after the last event came %d, want the marker %d", got, marker)
	}
}

// Cancelling a subscriber's context takes it off the hub; stopping the hub ends
// every subscription with a reason, live, still replaying its backlog, or made
// after the hub stopped.
func TestHubUnsubscribeAndShutdown(t *testing.T) {
	const buffer = 4
	e := newEnv(t)
	h, stop := runHub(t, e, event.HubOpts{Buffer: buffer})
	c0 := h.Position()

	goneCtx, cancelGone := context.WithCancel(t.Context())
	gone := h.Subscribe(goneCtx, event.SubscribeOpts{Actor: admin})
	reader := h.Subscribe(t.Context(), event.SubscribeOpts{Actor: admin})
	if n := h.Subscribers(); n != 2 {
		t.Fatalf("%d subscribers, want 2", n)
	}
	cancelGone()
	waitDone(t, gone, "cancelled subscriber")
	if n := h.Subscribers(); n != 1 {
		t.Errorf("after one unsubscribed: %d subscribers, want 1", n)
	}
	if r := gone.Reason(); r != "" {
		t.Errorf("a subscriber that unsubscribed has reason %q; the hub did not end it", r)
	}

	for range 2*buffer + 2 {
		id := commitOne(t, e, "hypothesis.created")
		if got := next(t, reader, "reader").Cursor.ID; got != id {
			t.Fatalf("reader got %d, want %d", got, id)
		}
	}
	// This one replays a backlog longer than its buffer and never reads: it stays
	// in its replay.
	stuck := h.Subscribe(t.Context(), event.SubscribeOpts{Actor: admin, Since: &c0})
	waitFor(t, "the stuck subscriber's buffer fills", func() bool { return len(stuck.C) == buffer })
	// This one resumes from the end and joins the live stream.
	end := h.Position()
	joined := h.Subscribe(t.Context(), event.SubscribeOpts{Actor: admin, Since: &end})
	waitFor(t, "the resuming subscriber joins", func() bool { return h.Subscribers() == 2 })
	// Subscribers whose context ends before they join never do, and have no reason.
	for i := range 20 {
		since := end
		if i%2 == 0 {
			since = c0
		}
		cctx, cancel := context.WithCancel(t.Context())
		cancel()
		s := h.Subscribe(cctx, event.SubscribeOpts{Actor: admin, Since: &since})
		waitDone(t, s, "pre-cancelled subscriber")
		if r := s.Reason(); r != "" {
			t.Errorf("pre-cancelled subscriber %d has reason %q", i, r)
		}
	}
	id := commitOne(t, e, "hypothesis.created")
	for name, s := range map[string]*event.Sub{"reader": reader, "joined": joined} {
		if got := next(t, s, name).Cursor.ID; got != id {
			t.Errorf("%s got %d, want %d", name, got, id)
		}
	}
	if n := h.Subscribers(); n != 2 {
		t.Errorf("with a reader and one joined subscriber the hub has %d subscribers, want 2", n)
	}

	if err := stop(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	for name, s := range map[string]*event.Sub{"reader": reader, "joined": joined, "stuck in its replay": stuck} {
		waitDone(t, s, name)
		if s.Reason() == "" {
			t.Errorf("%s: ended by shutdown without a reason", name)
		}
	}
	if n := h.Subscribers(); n != 0 {
		t.Errorf("after shutdown the hub has %d subscribers", n)
	}
	// Several of each: which way a resuming subscriber learns of the shutdown
	// depends on the order its goroutine sees things in.
	for i := range 8 {
		for name, o := range map[string]event.SubscribeOpts{
			"live after shutdown":                    {Actor: admin},
			"resuming from the start after shutdown": {Actor: admin, Since: &c0},
			"resuming from the end after shutdown":   {Actor: admin, Since: &end},
		} {
			s := h.Subscribe(t.Context(), o)
			waitDone(t, s, fmt.Sprint(name, " ", i))
			if s.Reason() == "" {
				t.Errorf("%s %d: ended without a reason", name, i)
			}
		}
	}
}

// A subscription resuming from a cursor made before the hub has read where the
// log ends still gets its whole backlog: it does not join the live stream at a
// position the hub has not taken up yet.
func TestHubResumeBeforeRun(t *testing.T) {
	e := newEnv(t)
	since := poll(t, e, admin, event.Cursor{}, anyone).Cursor
	var want []int64
	for range 3 {
		want = append(want, commitOne(t, e, "hypothesis.created"))
	}
	h := newHub(e, event.HubOpts{})
	s := h.Subscribe(t.Context(), event.SubscribeOpts{Actor: admin, Since: &since})
	startHub(t, h)
	if got := ids(take(t, s, "resumed", len(want))); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("resumed before Run: got %v, want %v", got, want)
	}
	marker := commitOne(t, e, "hypothesis.marked")
	if got := next(t, s, "resumed").Cursor.ID; got != marker {
		t.Errorf("after the backlog came %d, want the marker %d", got, marker)
	}
}
