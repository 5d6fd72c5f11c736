package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
)

// visibleTo is the event log from its start as actor may see it (public
// events, events whose audience names it; no system.*), in delivery order, read
// from the table: what a reader from the start must get.
func visibleTo(t *testing.T, env *apitest.Env, actor string) []string {
	t.Helper()
	rows, err := env.Pool.Query(context.Background(), `SELECT e.id::text FROM events e
		WHERE e.event_type NOT LIKE 'system.%' AND (cardinality(e.audience) = 0 OR $1 = ANY (e.audience))
		ORDER BY e.xid, e.id`, actor)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// history writes a log with events bob may not see among those he may: a
// message to carol, a system event, and a message to bob. It returns the ids
// of the three.
func history(t *testing.T, env *apitest.Env) (toCarol, system, toBob string) {
	t.Helper()
	ada := apitest.Contributor(t, "ada")
	createH(t, env, ada, map[string]any{"title": "TREM2 and microglia", "content": map[string]any{}})
	send(t, env, ada, map[string]any{"recipient": "actor:carol", "body": "for carol only"})
	if err := env.Pool.QueryRow(context.Background(), `WITH e AS (INSERT INTO events (event_type, occurred_at, source, actor_id, actor_kind, payload)
		VALUES ('system.maintenance', now(), 'scidex', 'system', 'system', '{}') RETURNING id)
		SELECT id::text FROM e`).Scan(&system); err != nil {
		t.Fatal(err)
	}
	send(t, env, ada, map[string]any{"recipient": "actor:bob", "subject": "hello bob", "body": "for bob"})
	createH(t, env, apitest.Contributor(t, "bob"), map[string]any{"title": "APOE4 and clearance", "content": map[string]any{}})
	var msgs []string
	rows, err := env.Pool.Query(context.Background(), `SELECT id::text FROM events WHERE event_type = 'message.created' ORDER BY xid, id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, id)
	}
	if rows.Err() != nil || len(msgs) != 2 {
		t.Fatalf("test setup: message events %v (%v)", msgs, rows.Err())
	}
	return msgs[0], system, msgs[1]
}

type startEvent struct {
	ID, Type, Cursor string
	Ref              *string
	Artifact         *struct{ Title string }
}

// A new consumer polling from: START gets every event it may see from the start
// of the log, in order, a page at a time, none of another actor's private ones,
// and the artifacts of its messages; then it resumes from its cursor whatever
// from says. A consumer asking for NOW (the default) begins at the end of the
// log, and since wins over from.
func TestPollFromStartReplaysTheLog(t *testing.T) {
	env := apitest.New(t)
	bob := apitest.Contributor(t, "bob")
	toCarol, system, toBob := history(t, env)
	q := `query($c: String, $from: LogStart, $s: Cursor) { poll(consumerId: $c, from: $from, since: $s, limit: 3) {
	  cursor hasMore events { id type cursor ref artifact { title } } } }`
	type page struct {
		Poll struct {
			Cursor  string
			HasMore bool
			Events  []startEvent
		}
	}
	pollAll := func(vars map[string]any) []startEvent {
		t.Helper()
		var got []startEvent
		for range 1000 {
			var p page
			env.OK(t, bob, q, vars, &p)
			got = append(got, p.Poll.Events...)
			if !p.Poll.HasMore {
				return got
			}
		}
		t.Fatal("poll never ran out")
		return nil
	}
	idsOf := func(evs []startEvent) []string {
		out := make([]string, len(evs))
		for i, e := range evs {
			out[i] = e.ID
		}
		return out
	}

	got := pollAll(map[string]any{"c": "bob-history", "from": "START"})
	want := visibleTo(t, env, "bob")
	if fmt.Sprint(idsOf(got)) != fmt.Sprint(want) {
		t.Fatalf("bob from the start got %v, want %v", idsOf(got), want)
	}
	for _, hidden := range []string{toCarol, system} {
		if slices.Contains(idsOf(got), hidden) {
			t.Errorf("bob was given event %s", hidden)
		}
	}
	for _, e := range got {
		if e.ID == toBob && (e.Artifact == nil || e.Artifact.Title != "hello bob") {
			t.Errorf("bob's message event %s: artifact %+v, want his message", e.ID, e.Artifact)
		}
	}

	// Caught up: the next event written is the next one he gets. His stored
	// cursor wins over from: START.
	later := createH(t, env, apitest.Contributor(t, "carol"), map[string]any{"title": "after the replay", "content": map[string]any{}})
	if again := pollAll(map[string]any{"c": "bob-history", "from": "START"}); len(again) != 1 || again[0].Ref == nil || *again[0].Ref != later.Ref {
		t.Errorf("after the replay bob's consumer got %+v, want only the event of %s", again, later.Ref)
	}

	// NOW, and no from at all, begin at the end of the log.
	for _, vars := range []map[string]any{{"c": "bob-now", "from": "NOW"}, {"c": "bob-default"}} {
		if evs := pollAll(vars); len(evs) != 0 {
			t.Errorf("%v: a new consumer got %d events of the past", vars, len(evs))
		}
	}
	last := createH(t, env, apitest.Contributor(t, "carol"), map[string]any{"title": "for the NOW consumers", "content": map[string]any{}})
	for _, vars := range []map[string]any{{"c": "bob-now", "from": "NOW"}, {"c": "bob-default"}} {
		if evs := pollAll(vars); len(evs) != 1 || *evs[0].Ref != last.Ref {
			t.Errorf("%v: after a write got %+v, want its event", vars, evs)
		}
	}

	// since wins over from: the events after it, not the whole log.
	after := pollAll(map[string]any{"s": got[len(got)-2].Cursor, "from": "START"})
	if fmt.Sprint(idsOf(after)) != fmt.Sprint(append([]string{got[len(got)-1].ID}, idsOf(pollAll(map[string]any{"s": got[len(got)-1].Cursor}))...)) {
		t.Errorf("since with from: START got %v: from must be ignored", idsOf(after))
	}
	if len(after) != 3 {
		t.Errorf("since the second-last replayed event: %d events, want 3 (the last, and the two written after)", len(after))
	}
}

// A subscription from: START replays every event its actor may see, in order,
// none of another actor's private ones, while writers keep committing; then it
// goes live with nothing missing or doubled at the seam.
func TestSubscriptionFromStartReplaysThenGoesLive(t *testing.T) {
	env := apitest.New(t)
	ada, bob := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob")
	toCarol, system, toBob := history(t, env)
	ws := env.WS(t, bob)
	ws.Subscribe("s", `subscription { events(from: START, consumerId: "bob-ws") { id type cursor ref artifact { title } } }`, nil)

	// Writers keep writing while the log replays (the subscription starts
	// replaying as soon as the server has its subscribe message), so most of
	// these events reach it live, after it has joined the hub.
	for i := range 20 {
		createH(t, env, ada, map[string]any{"title": fmt.Sprintf("live %d", i), "content": map[string]any{}})
		if i%5 == 0 {
			send(t, env, ada, map[string]any{"recipient": "actor:carol", "body": fmt.Sprintf("live %d for carol", i)})
		}
	}
	last := createH(t, env, ada, map[string]any{"title": "last live write", "content": map[string]any{}})
	var got []gotEvent
	for {
		e := nextEvent(t, ws, "s", "events")
		got = append(got, e)
		if e.Ref != nil && *e.Ref == last.Ref {
			break
		}
	}
	var gotIDs []string
	for _, e := range got {
		gotIDs = append(gotIDs, e.ID)
		if e.ID == toBob && (e.Artifact == nil || e.Artifact.Title != "hello bob") {
			t.Errorf("bob's message event: artifact %+v", e.Artifact)
		}
	}
	want := visibleTo(t, env, "bob")
	if strings.Join(gotIDs, ",") != strings.Join(want, ",") {
		t.Fatalf("bob from the start got %v, want %v", gotIDs, want)
	}
	for _, hidden := range []string{toCarol, system} {
		if slices.Contains(gotIDs, hidden) {
			t.Errorf("bob was sent event %s", hidden)
		}
	}
	// Exactly once at the seam: the next event sent is the next one written.
	marker := createH(t, env, ada, map[string]any{"title": "marker", "content": map[string]any{}})
	if e := nextEvent(t, ws, "s", "events"); e.Ref == nil || *e.Ref != marker.Ref {
		t.Errorf("after the last live write came %+v, want the marker %s", e, marker.Ref)
	}

	// since wins over from: START.
	ws.Subscribe("since", `subscription($s: Cursor) { events(since: $s, from: START) { id ref } }`, map[string]any{"s": got[len(got)-1].Cursor})
	if e := nextEvent(t, ws, "since", "events"); e.Ref == nil || *e.Ref != marker.Ref {
		t.Errorf("since with from: START began with %+v, want the event after since (the marker)", e)
	}
}
