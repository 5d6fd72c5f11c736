package event_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/event"
)

// visibleLog is the event log from its start as actor may see it, in delivery
// order, read from the table.
func visibleLog(t *testing.T, e *env, actor auth.Actor) []event.Cursor {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT e.id, e.event_type, e.audience FROM events e ORDER BY e.xid, e.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	visible := map[int64]bool{}
	for rows.Next() {
		var ev event.Event
		if err := rows.Scan(&ev.Cursor.ID, &ev.Type, &ev.Audience); err != nil {
			t.Fatal(err)
		}
		visible[ev.Cursor.ID] = ev.VisibleTo(actor)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var out []event.Cursor
	for _, c := range logAfter(t, e, event.Cursor{}) {
		if visible[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// Where a reader begins: since wins, then a stored cursor, then From; FromNow
// (the zero value) is the end of the log, FromStart before its first event.
func TestStartFrom(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	first := commitOne(t, e, "hypothesis.created")
	commitOne(t, e, "hypothesis.created")
	start := func(p event.StartParams) event.Cursor {
		t.Helper()
		p.Actor, p.Now = alice, time.Now()
		c, err := e.c.Start(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	end := poll(t, e, admin, event.Cursor{}, anyone).Cursor
	if c := start(event.StartParams{}); c != end {
		t.Errorf("FromNow without a cursor begins at %+v, want the end of the log %+v", c, end)
	}
	if c := start(event.StartParams{From: event.FromStart}); c != (event.Cursor{}) {
		t.Errorf("FromStart without a cursor begins at %+v, want the zero cursor", c)
	}
	since := event.Cursor{XID: 1, ID: first}
	if c := start(event.StartParams{From: event.FromStart, Since: &since}); c != since {
		t.Errorf("FromStart with since begins at %+v, want since %+v", c, since)
	}
	if err := e.c.Save(ctx, alice, "w", since, time.Now()); err != nil {
		t.Fatal(err)
	}
	if c := start(event.StartParams{From: event.FromStart, ConsumerID: "w"}); c != since {
		t.Errorf("FromStart for a consumer with a cursor begins at %+v, want its cursor %+v", c, since)
	}
	if c := start(event.StartParams{From: event.FromStart, ConsumerID: "new"}); c != (event.Cursor{}) {
		t.Errorf("FromStart for a new consumer begins at %+v, want the zero cursor", c)
	}
}

// A new durable consumer polling FromStart pages through the whole log it may
// see, in order, once, across more pages than one read of the log holds; then
// it has caught up, and the next event written is the next it gets.
func TestPollFromStart(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	if err := writeMany(ctx, e.pool, 300); err != nil {
		t.Fatal(err)
	}
	commitOne(t, e, "message.created", "alice", "carol")
	commitOne(t, e, "system.maintenance")
	if err := writeMany(ctx, e.pool, 300); err != nil {
		t.Fatal(err)
	}
	want := visibleLog(t, e, bob)
	if len(want) < 600 {
		t.Fatalf("test setup: %d events visible to bob, want at least 600", len(want))
	}
	var got []*event.Event
	for page := 0; ; page++ {
		r, err := e.c.Poll(ctx, event.PollParams{Actor: bob, ConsumerID: "replayer", From: event.FromStart, Limit: 250, AutoAdvance: true, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Events...)
		if !r.HasMore {
			break
		}
		if page > len(want) {
			t.Fatalf("still more after %d pages", page)
		}
	}
	checkStream(t, "bob replaying", got, want)
	next := commitOne(t, e, "hypothesis.created")
	r, err := e.c.Poll(ctx, event.PollParams{Actor: bob, ConsumerID: "replayer", From: event.FromStart, Limit: 250, AutoAdvance: true, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids(r.Events)) != fmt.Sprint([]int64{next}) {
		t.Errorf("after the replay the consumer got %v, want only the new event %d: its cursor wins over FromStart", ids(r.Events), next)
	}
}

// A subscription from the start of the log replays every event its actor may
// see, in order, a page at a time (more than one page here), including one
// whose transaction began before the subscription and committed during the
// replay; then it joins the live stream while writers go on committing, with
// nothing missing or doubled at the seam.
func TestHubReplaysFromTheStart(t *testing.T) {
	const writers, perWriter = 3, 200
	e := newEnv(t)
	h, _ := runHub(t, e, event.HubOpts{Buffer: 1 << 14})
	ctx := t.Context()
	if err := writeMany(ctx, e.pool, 400); err != nil {
		t.Fatal(err)
	}
	commitOne(t, e, "message.created", "alice", "carol")
	toBob := commitOne(t, e, "message.created", "alice", "bob")
	commitOne(t, e, "system.maintenance")

	// A transaction takes its id now and commits its event only once the
	// replay is under way: it sorts before everything written after it began.
	late, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Rollback(context.Background()) //nolint:errcheck
	if _, err := late.Exec(ctx, "SELECT pg_current_xact_id()"); err != nil {
		t.Fatal(err)
	}

	start, err := e.c.Start(ctx, event.StartParams{Actor: bob, From: event.FromStart, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	sub := h.Subscribe(ctx, event.SubscribeOpts{Actor: bob, Since: &start})
	writeErr := make(chan error, writers)
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			writeErr <- writeMany(ctx, e.pool, perWriter)
		}()
	}
	var got []*event.Event
	got = append(got, take(t, sub, "bob", 50)...)
	lateID := insert(ctx, t, late, "hypothesis.created", `{"late":true}`, nil)
	if err := late.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for range writers {
		if err := <-writeErr; err != nil {
			t.Fatal(err)
		}
	}
	sentinel := commitOne(t, e, "test.sentinel")
	rest, err := collect(sub, "test.sentinel")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, rest...)

	want := visibleLog(t, e, bob)
	checkStream(t, "bob from the start", got, want)
	gotIDs := ids(got)
	for what, id := range map[string]int64{"the message to bob": toBob, "the late commit": lateID, "the sentinel": sentinel} {
		if !slices.Contains(gotIDs, id) {
			t.Errorf("%s (%d) was not delivered", what, id)
		}
	}
	if t.Failed() {
		return
	}
	marker := commitOne(t, e, "hypothesis.marked")
	if got := next(t, sub, "bob").Cursor.ID; got != marker {
		t.Errorf("after the sentinel came %d, want the marker %d", got, marker)
	}
}
