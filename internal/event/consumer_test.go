package event_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/event"
)

// pollAs polls as consumer id through c with the given arguments.
func pollAs(t *testing.T, c *event.Consumers, actor auth.Actor, id string, limit int, advance bool, since *event.Cursor) *event.PollResult {
	t.Helper()
	r, err := c.Poll(context.Background(), event.PollParams{Actor: actor, ConsumerID: id, Since: since,
		Limit: limit, AutoAdvance: advance, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func getConsumer(t *testing.T, c *event.Consumers, actor auth.Actor, id string) *event.Consumer {
	t.Helper()
	got, err := c.Get(context.Background(), actor, id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func commitN(t *testing.T, e *env, n int) []int64 {
	t.Helper()
	out := make([]int64, n)
	for i := range out {
		out[i] = commitOne(t, e, "hypothesis.created")
	}
	return out
}

func sameIDs(got []*event.Event, want []int64) bool { return slices.Equal(ids(got), want) }

// With autoAdvance a poll leaves its page pending; the consumer's next poll
// commits it and continues after it. A subscription start commits it too.
func TestPollCommitsOnNextPoll(t *testing.T) {
	e := newEnv(t)
	sel, _ := event.NewSelector([]string{"hypothesis.created"}, nil, "")
	p := func() *event.PollResult {
		t.Helper()
		r, err := e.c.Poll(t.Context(), event.PollParams{Actor: alice, ConsumerID: "c", Selector: sel, Limit: 2, AutoAdvance: true, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r0 := p() // a new consumer begins at the end of the log
	want := commitN(t, e, 5)
	r1 := p()
	if !sameIDs(r1.Events, want[:2]) {
		t.Fatalf("first page %v, want %v", ids(r1.Events), want[:2])
	}
	c := getConsumer(t, e.c, alice, "c")
	if c.Cursor != r0.Cursor || c.Pending == nil || *c.Pending != r1.Cursor {
		t.Fatalf("after one answer: cursor %v pending %v; want the start, and the page pending at %v", c.Cursor, c.Pending, r1.Cursor)
	}
	r2 := p()
	if !sameIDs(r2.Events, want[2:4]) {
		t.Fatalf("second page %v, want %v", ids(r2.Events), want[2:4])
	}
	if c := getConsumer(t, e.c, alice, "c"); c.Cursor != r1.Cursor || *c.Pending != r2.Cursor || c.Deliveries != 4 || c.Redeliveries != 0 {
		t.Fatalf("after the second poll: %+v; want the first page committed and the second pending, 4 deliveries", c)
	}
	// A subscription with the consumerId asks for what comes next as well.
	start, err := e.c.Start(t.Context(), event.StartParams{Actor: alice, ConsumerID: "c", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if start != r2.Cursor {
		t.Errorf("a subscription begins at %v, want after the page last answered %v", start, r2.Cursor)
	}
	if c := getConsumer(t, e.c, alice, "c"); c.Cursor != r2.Cursor || c.Pending != nil {
		t.Errorf("after the subscription's start: cursor %v pending %v, want %v and none", c.Cursor, c.Pending, r2.Cursor)
	}
}

// A page whose answer may have died with the server is handed out again: a
// poll served by another process commits it only while the process that
// answered it is alive (holds its lock), and never skips it otherwise.
func TestPollRedeliversAPageOfADeadServer(t *testing.T) {
	e := newEnv(t)
	first := event.NewConsumers(e.pool) // the server that answers, then dies
	pollAs(t, first, alice, "w", 3, true, nil)
	want := commitN(t, e, 6)
	r1 := pollAs(t, first, alice, "w", 3, true, nil)
	if !sameIDs(r1.Events, want[:3]) {
		t.Fatalf("first page %v", ids(r1.Events))
	}
	restarted := event.NewConsumers(e.pool)
	again := pollAs(t, restarted, alice, "w", 3, true, nil)
	if !sameIDs(again.Events, want[:3]) {
		t.Fatalf("after its server died, the consumer got %v; want the unacknowledged page %v again", ids(again.Events), want[:3])
	}
	if c := getConsumer(t, restarted, alice, "w"); c.Redeliveries != 3 || c.Deliveries != 6 || c.HeadDeliveries != 2 {
		t.Errorf("counts %+v: want 6 deliveries, 3 of them redeliveries, the head handed out twice", c)
	}

	// Two replicas that are alive (each holds its lock, as its hub does): a
	// page one answered counts as delivered when the next poll reaches the other.
	replica := event.NewConsumers(e.pool)
	conn, err := pgx.Connect(t.Context(), e.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, c := range []*event.Consumers{restarted, replica} {
		if _, err := conn.Exec(t.Context(), "SELECT pg_advisory_lock($1, $2)", event.ConsumerLockSpace, c.Instance()); err != nil {
			t.Fatal(err)
		}
	}
	r2 := pollAs(t, replica, alice, "w", 3, true, nil)
	if !sameIDs(r2.Events, want[3:]) {
		t.Fatalf("third poll %v, want %v", ids(r2.Events), want[3:])
	}
	next := commitOne(t, e, "hypothesis.created")
	if r := pollAs(t, restarted, alice, "w", 3, true, nil); !sameIDs(r.Events, []int64{next}) {
		t.Errorf("the page of a live replica was not committed: got %v, want only %d", ids(r.Events), next)
	}
}

// since acknowledges what came before it, with or without autoAdvance, and
// never moves the cursor back.
func TestPollSinceCommits(t *testing.T) {
	e := newEnv(t)
	pollAs(t, e.c, alice, "s", 2, true, nil)
	want := commitN(t, e, 4)
	r := pollAs(t, e.c, alice, "s", 2, false, nil)
	if !sameIDs(r.Events, want[:2]) {
		t.Fatalf("first page %v", ids(r.Events))
	}
	since := r.Events[0].Cursor
	if r := pollAs(t, e.c, alice, "s", 2, false, &since); !sameIDs(r.Events, want[1:3]) {
		t.Fatalf("after since: %v, want %v", ids(r.Events), want[1:3])
	}
	if c := getConsumer(t, e.c, alice, "s"); c.Cursor != since || c.Pending != nil {
		t.Fatalf("since did not commit: cursor %v pending %v, want %v", c.Cursor, c.Pending, since)
	}
	// Another process, no since, autoAdvance: resumes after what since acknowledged.
	if r := pollAs(t, event.NewConsumers(e.pool), alice, "s", 10, true, nil); !sameIDs(r.Events, want[1:]) {
		t.Fatalf("resumed with %v, want %v", ids(r.Events), want[1:])
	}
	old := want[0]
	oldC := event.Cursor{}
	for _, ev := range r.Events {
		if ev.Cursor.ID == old {
			oldC = ev.Cursor
		}
	}
	pollAs(t, e.c, alice, "s", 1, false, &oldC)
	if c := getConsumer(t, e.c, alice, "s"); c.Cursor != since {
		t.Errorf("an older since moved the cursor back to %v", c.Cursor)
	}
}

// Two clients polling one consumer at once with the defaults: every event is
// handed out once, none twice and none skipped, and the cursor ends at the end.
func TestConcurrentPollsOfOneConsumer(t *testing.T) {
	const clients, events, limit = 6, 240, 7
	e := newEnv(t)
	pollAs(t, e.c, alice, "shared", 1, true, nil)
	want := commitN(t, e, events)
	var (
		mu  sync.Mutex
		got []int64
		wg  sync.WaitGroup
	)
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				r, err := e.c.Poll(context.Background(), event.PollParams{Actor: alice, ConsumerID: "shared", Limit: limit, AutoAdvance: true, Now: time.Now()})
				if err != nil {
					errs <- err
					return
				}
				if len(r.Events) == 0 {
					errs <- nil
					return
				}
				mu.Lock()
				got = append(got, ids(r.Events)...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%d events handed out (%d distinct), want each of the %d once", len(got), len(slices.Compact(slices.Clone(got))), len(want))
	}
	c := getConsumer(t, e.c, alice, "shared")
	if c.Deliveries != events || c.Redeliveries != 0 {
		t.Errorf("counts: %d deliveries, %d redeliveries; want %d and 0", c.Deliveries, c.Redeliveries, events)
	}
}

// A consumer that keeps failing on one event (it asks again from the same
// since) gets it at most MaxDeliveries times; then it is parked, listed, and
// left out of that consumer's pages, and nobody else's.
func TestDeadLetterBound(t *testing.T) {
	e := newEnv(t)
	c := event.NewConsumersOpts(e.pool, event.ConsumersOpts{MaxDeliveries: 3})
	base := poll(t, e, admin, event.Cursor{}, anyone).Cursor
	want := commitN(t, e, 3)
	for i := range 3 {
		if r := pollAs(t, c, alice, "fails", 2, false, &base); !sameIDs(r.Events, want[:2]) {
			t.Fatalf("attempt %d: %v, want %v", i+1, ids(r.Events), want[:2])
		}
	}
	r := pollAs(t, c, alice, "fails", 2, false, &base)
	if !sameIDs(r.Events, want[1:]) {
		t.Fatalf("after 3 deliveries of %d, the page is %v; want it parked and %v", want[0], ids(r.Events), want[1:])
	}
	got := getConsumer(t, c, alice, "fails")
	if got.DeadLetterCount != 1 || len(got.DeadLetters) != 1 || got.DeadLetters[0].Cursor.ID != want[0] || got.DeadLetters[0].Deliveries != 3 {
		t.Fatalf("dead letters: %d %+v; want event %d, delivered 3 times", got.DeadLetterCount, got.DeadLetters, want[0])
	}
	if got.Redeliveries != 5 || got.Deliveries != 8 {
		t.Errorf("counts: %d deliveries, %d redeliveries; want 8 and 5", got.Deliveries, got.Redeliveries)
	}
	if r := pollAs(t, c, alice, "fails", 10, true, &base); slices.Contains(ids(r.Events), want[0]) {
		t.Errorf("a parked event was delivered again: %v", ids(r.Events))
	}
	if ev, err := c.EventAt(t.Context(), alice, got.DeadLetters[0].Cursor); err != nil || ev == nil || ev.Cursor.ID != want[0] {
		t.Errorf("the parked event reads as %v (%v)", ev, err)
	}
	if r := pollAs(t, c, alice, "other", 10, false, &base); !sameIDs(r.Events, want) {
		t.Errorf("another consumer got %v, want all of %v", ids(r.Events), want)
	}
	if _, err := c.Get(t.Context(), alice, "never", time.Now()); err != event.ErrNoConsumer {
		t.Errorf("an unknown consumer: %v, want ErrNoConsumer", err)
	}
}

// A poll's cursor moves past the events its reader may not see: after a run
// of alice's private events bob's empty poll answers the cursor of the last
// of them, so his next poll does not scan them again, and the next event he
// may see still comes. An event still uncommitted behind them holds the
// cursor back (it could yet be one bob may see).
func TestPollCursorPassesEventsTheReaderCannotSee(t *testing.T) {
	e := newEnv(t)
	start := poll(t, e, bob, event.Cursor{}, nil).Cursor
	for range 5 {
		commitOne(t, e, "message.sent", "alice")
	}
	aliceSaw := poll(t, e, alice, start, nil)
	if len(aliceSaw.Events) != 5 {
		t.Fatalf("alice polled %d of her 5 events", len(aliceSaw.Events))
	}
	r := poll(t, e, bob, start, nil)
	if len(r.Events) != 0 || r.Cursor != aliceSaw.Cursor {
		t.Fatalf("bob's poll: %d events, cursor %v; want none and the cursor past alice's events %v", len(r.Events), r.Cursor, aliceSaw.Cursor)
	}
	id := commitOne(t, e, "hypothesis.created")
	if next := poll(t, e, bob, r.Cursor, nil); !sameIDs(next.Events, []int64{id}) {
		t.Fatalf("bob's next poll: %v, want the public event %d", ids(next.Events), id)
	}

	// An open transaction's event: the cursor waits before it.
	ctx := context.Background()
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	late := insert(ctx, t, tx, "hypothesis.created", `{"n":2}`, nil)
	before := poll(t, e, bob, event.Cursor{}, nil).Cursor
	for range 3 {
		commitOne(t, e, "message.sent", "alice")
	}
	held := poll(t, e, bob, before, nil)
	if len(held.Events) != 0 || held.Cursor != before {
		t.Fatalf("behind an open transaction bob's poll moved to %v from %v (%d events)", held.Cursor, before, len(held.Events))
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := poll(t, e, bob, held.Cursor, nil); !sameIDs(got.Events, []int64{late}) {
		t.Fatalf("after the commit bob polled %v, want the late event %d", ids(got.Events), late)
	}
}
