package event_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/event"
)

var (
	alice  = auth.Actor{ID: "alice", Kind: "human", Permissions: []auth.Permission{auth.PermContributor}}
	bob    = auth.Actor{ID: "bob", Kind: "human", Permissions: []auth.Permission{auth.PermContributor}}
	admin  = auth.Actor{ID: "root", Kind: "human", Permissions: []auth.Permission{auth.PermAdmin}}
	anyone = (*event.Selector)(nil)
)

type env struct {
	url  string
	pool *pgxpool.Pool
	c    *event.Consumers
}

func newEnv(t *testing.T) *env {
	url := dbtest.URL(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &env{url: url, pool: pool, c: event.NewConsumers(pool)}
}

func insert(ctx context.Context, t *testing.T, tx pgx.Tx, typ, payload string, audience []string) int64 {
	t.Helper()
	if audience == nil {
		audience = []string{}
	}
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO events (event_type, occurred_at, source, actor_id, actor_kind, ref, payload, audience)
		VALUES ($1, now(), 'test', 'alice', 'human', 'hypothesis:h1', $2, $3) RETURNING id`, typ, payload, audience).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_notify('scidex_events', $1)", fmt.Sprint(id)); err != nil {
		t.Fatal(err)
	}
	return id
}

func commitOne(t *testing.T, e *env, typ string, audience ...string) int64 {
	t.Helper()
	ctx := context.Background()
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := insert(ctx, t, tx, typ, `{"n":1}`, audience)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return id
}

func poll(t *testing.T, e *env, actor auth.Actor, since event.Cursor, sel *event.Selector) *event.PollResult {
	t.Helper()
	r, err := e.c.Poll(context.Background(), event.PollParams{Actor: actor, Selector: sel, Since: &since, Limit: 100, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ids(evs []*event.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Cursor.ID
	}
	return out
}

// A transaction that started earlier but commits later is not skipped: events of
// later transactions wait until it has ended, then both come, in (xid, id) order.
func TestLateCommitIsNotSkipped(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	start := poll(t, e, alice, event.Cursor{}, anyone).Cursor

	// A gets its transaction id first (its first write), B after it.
	a, _ := e.pool.Begin(ctx)
	defer a.Rollback(ctx)
	if _, err := a.Exec(ctx, "SELECT pg_current_xact_id()"); err != nil {
		t.Fatal(err)
	}
	b, _ := e.pool.Begin(ctx)
	bID := insert(ctx, t, b, "hypothesis.created", `{"who":"b"}`, nil)
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// B is committed, but A (older) is still running: B's event waits.
	if r := poll(t, e, alice, start, anyone); len(r.Events) != 0 || r.Cursor != start {
		t.Fatalf("while an older transaction runs, poll returned %v (cursor %v)", ids(r.Events), r.Cursor)
	}
	// A writes its event now: it gets the higher id but the lower xid.
	aID := insert(ctx, t, a, "hypothesis.created", `{"who":"a"}`, nil)
	if aID < bID {
		t.Fatalf("test setup: A's id %d should be above B's %d", aID, bID)
	}
	if err := a.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := poll(t, e, alice, start, anyone)
	if got := ids(r.Events); len(got) != 2 || got[0] != aID || got[1] != bID {
		t.Fatalf("after both commit: %v, want [%d %d] (A's transaction first)", got, aID, bID)
	}
	if r2 := poll(t, e, alice, r.Cursor, anyone); len(r2.Events) != 0 {
		t.Errorf("polling on from the cursor repeats %v", ids(r2.Events))
	}
}

func TestVisibility(t *testing.T) {
	e := newEnv(t)
	start := poll(t, e, admin, event.Cursor{}, anyone).Cursor
	pub := commitOne(t, e, "hypothesis.created")
	toBob := commitOne(t, e, "message.created", "alice", "bob")
	toCarol := commitOne(t, e, "message.created", "alice", "carol")
	sys := commitOne(t, e, "system.maintenance")
	for _, c := range []struct {
		who  auth.Actor
		want []int64
	}{
		{alice, []int64{pub, toBob, toCarol}},
		{bob, []int64{pub, toBob}},
		{admin, []int64{pub, toBob, toCarol, sys}},
	} {
		if got := ids(poll(t, e, c.who, start, anyone).Events); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s sees %v, want %v", c.who.ID, got, c.want)
		}
	}
}

func TestSelectors(t *testing.T) {
	e := newEnv(t)
	start := poll(t, e, alice, event.Cursor{}, anyone).Cursor
	h1 := commitOne(t, e, "hypothesis.created")
	commitOne(t, e, "paper.created")
	h2 := commitOne(t, e, "hypothesis.updated")
	sel, err := event.NewSelector([]string{"hypothesis.*"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(poll(t, e, alice, start, sel).Events); fmt.Sprint(got) != fmt.Sprint([]int64{h1, h2}) {
		t.Errorf("hypothesis.*: %v", got)
	}
	sel, err = event.NewSelector(nil, json.RawMessage(`{"==": [{"var": "type"}, "hypothesis.updated"]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(poll(t, e, alice, start, sel).Events); fmt.Sprint(got) != fmt.Sprint([]int64{h2}) {
		t.Errorf("JSONLogic filter: %v", got)
	}
	for _, bad := range []struct {
		types  []string
		filter string
	}{{[]string{"Hypothesis.created"}, ""}, {[]string{"hypothesis.*.x"}, ""}, {nil, `{"frobnicate": [1]}`}, {nil, `{"==": [1]`}} {
		var f json.RawMessage
		if bad.filter != "" {
			f = json.RawMessage(bad.filter)
		}
		if _, err := event.NewSelector(bad.types, f, ""); err == nil {
			t.Errorf("selector %v %s accepted", bad.types, bad.filter)
		}
	}
}

// A durable consumer keeps its place across polls, only ever moving forward.
func TestDurableConsumer(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := func(limit int, advance bool) *event.PollResult {
		r, err := e.c.Poll(ctx, event.PollParams{Actor: alice, ConsumerID: "worker-1", Limit: limit, AutoAdvance: advance, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := p(10, true); len(r.Events) != 0 {
		t.Fatalf("a new consumer starts at the end of the log, got %v", ids(r.Events))
	}
	var want []int64
	for i := 0; i < 5; i++ {
		want = append(want, commitOne(t, e, "hypothesis.created"))
	}
	r := p(3, false)
	if fmt.Sprint(ids(r.Events)) != fmt.Sprint(want[:3]) || !r.HasMore {
		t.Fatalf("first page: %v hasMore %v", ids(r.Events), r.HasMore)
	}
	if again := p(3, true); fmt.Sprint(ids(again.Events)) != fmt.Sprint(want[:3]) {
		t.Fatalf("without autoAdvance the cursor must not move: %v", ids(again.Events))
	}
	if rest := p(10, true); fmt.Sprint(ids(rest.Events)) != fmt.Sprint(want[3:]) || rest.HasMore {
		t.Fatalf("second page: %v", ids(rest.Events))
	}
	// Another actor's consumer of the same name is its own.
	r2, err := e.c.Poll(ctx, event.PollParams{Actor: bob, ConsumerID: "worker-1", Limit: 10, AutoAdvance: true, Now: time.Now()})
	if err != nil || len(r2.Events) != 0 {
		t.Errorf("bob's worker-1: %v %v", r2, err)
	}
	// Untouched for 30 days, a consumer expires.
	n, err := e.c.DeleteExpired(ctx, time.Now().Add(event.ConsumerTTL+time.Hour))
	if err != nil || n != 2 {
		t.Errorf("expired %d (%v), want 2", n, err)
	}
}

// A transaction running in another database of the same cluster holds back
// nothing here: it cannot commit an event into this database's log. (The
// cluster-wide pg_snapshot_xmin would hold every later event back until it
// ends.) A transaction of this database still does.
func TestAnotherDatabaseHoldsNothingBack(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	start := poll(t, e, admin, event.Cursor{}, anyone).Cursor

	other, err := pgx.Connect(ctx, dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	elsewhere, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer elsewhere.Rollback(context.Background()) //nolint:errcheck
	if _, err := elsewhere.Exec(ctx, "SELECT pg_current_xact_id()"); err != nil {
		t.Fatal(err)
	}

	first := commitOne(t, e, "hypothesis.created")
	if got := ids(poll(t, e, admin, start, anyone).Events); fmt.Sprint(got) != fmt.Sprint([]int64{first}) {
		t.Fatalf("with a transaction open in another database: %v, want [%d]", got, first)
	}

	here, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer here.Rollback(context.Background()) //nolint:errcheck
	if _, err := here.Exec(ctx, "SELECT pg_current_xact_id()"); err != nil {
		t.Fatal(err)
	}
	second := commitOne(t, e, "hypothesis.created")
	if got := ids(poll(t, e, admin, start, anyone).Events); fmt.Sprint(got) != fmt.Sprint([]int64{first}) {
		t.Fatalf("with an older transaction open in this database: %v, want only [%d]", got, first)
	}
	if err := here.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ids(poll(t, e, admin, start, anyone).Events); fmt.Sprint(got) != fmt.Sprint([]int64{first, second}) {
		t.Fatalf("once it ended: %v, want [%d %d]", got, first, second)
	}
}

// horizonAcross runs `SELECT event_horizon()` in this database with its snapshot
// taken while tx (which holds a lock on a shared catalog) still runs, the
// function itself evaluated only once tx has ended: the statement waits on the
// lock at execution time, after its snapshot. It returns the horizon the
// statement computed; commit is called once the statement is waiting.
func horizonAcross(t *testing.T, e *env, commit func()) uint64 {
	t.Helper()
	ctx := t.Context()
	got := make(chan string, 1)
	errc := make(chan error, 1)
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	var pid int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	go func() {
		var h string
		err := conn.QueryRow(ctx, `SELECT event_horizon()::text FROM (SELECT pg_relation_size('pg_shseclabel')) AS wait`).Scan(&h)
		got <- h
		errc <- err
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		var waiting bool
		if err := e.pool.QueryRow(ctx, "SELECT coalesce(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the horizon statement never waited on the lock")
		}
		time.Sleep(5 * time.Millisecond)
	}
	commit()
	h := <-got
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	var x uint64
	if _, err := fmt.Sscan(h, &x); err != nil {
		t.Fatal(err)
	}
	return x
}

// lockingTx begins a transaction on conn that holds an xid and a lock the
// horizon statement of horizonAcross waits for.
func lockingTx(t *testing.T, conn *pgx.Conn) (pgx.Tx, uint64) {
	t.Helper()
	ctx := t.Context()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var xid string
	if err := tx.QueryRow(ctx, "SELECT pg_current_xact_id()::text").Scan(&xid); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE pg_shseclabel IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	var x uint64
	if _, err := fmt.Sscan(xid, &x); err != nil {
		t.Fatal(err)
	}
	return tx, x
}

// A transaction of another database that ends while a reader's statement runs
// (after its snapshot, before the horizon looks for it in pg_stat_activity)
// holds nothing back here; one of this database that wrote events does. The
// first held every event back for that one call, a poll came back short
// (migration 0011).
func TestAFinishedTransactionHoldsBackOnlyWhatItWrote(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	start := poll(t, e, admin, event.Cursor{}, anyone).Cursor
	other, err := pgx.Connect(ctx, dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	tx, x := lockingTx(t, other)
	// A later transaction has committed an event: the reader's snapshot holds
	// tx among its running ones, below that event.
	later := commitOne(t, e, "hypothesis.created")
	h := horizonAcross(t, e, func() {
		if err := tx.Commit(ctx); err != nil {
			t.Error(err)
		}
	})
	if h <= x {
		t.Errorf("a transaction of another database, finished during the read, held the horizon at %d (its xid %d)", h, x)
	}
	if got := ids(poll(t, e, admin, start, anyone).Events); len(got) != 1 || got[0] != later {
		t.Errorf("poll after it: %v, want [%d]", got, later)
	}

	here, err := pgx.Connect(ctx, e.url)
	if err != nil {
		t.Fatal(err)
	}
	defer here.Close(context.Background())
	tx, x = lockingTx(t, here)
	insert(ctx, t, tx, "hypothesis.created", `{"late": true}`, nil)
	commitOne(t, e, "hypothesis.created")
	h = horizonAcross(t, e, func() {
		if err := tx.Commit(ctx); err != nil {
			t.Error(err)
		}
	})
	if h > x {
		t.Errorf("a transaction of this database that wrote an event and committed during the read was passed: horizon %d, its xid %d", h, x)
	}
}
