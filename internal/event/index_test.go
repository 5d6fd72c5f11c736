package event_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/scidex/substrate/internal/event"
)

// commitRef commits one event of type typ about ref, as the store would.
func commitRef(t *testing.T, e *env, typ, ref string) int64 {
	t.Helper()
	ctx := context.Background()
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	var id int64
	if err := tx.QueryRow(ctx, `INSERT INTO events (event_type, occurred_at, source, actor_id, actor_kind, ref, payload)
		VALUES ($1, now(), 'test', 'alice', 'human', $2, '{}') RETURNING id`, typ, ref).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_notify('scidex_events', $1)", fmt.Sprint(id)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return id
}

// An event visits only the subscribers it may be for: the pages of its own
// artifact, those of its type and type prefix, and those of every event; the
// other pages and types are never looked at, however many there are. Each of
// them still gets exactly what it asked for.
func TestDispatchVisitsOnlyPossibleMatches(t *testing.T) {
	e := newEnv(t)
	h, _ := runHub(t, e, event.HubOpts{})
	ctx := t.Context()
	sel := func(types []string, ref string) *event.Selector {
		t.Helper()
		s, err := event.NewSelector(types, nil, ref)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sub := func(s *event.Selector) *event.Sub {
		return h.Subscribe(ctx, event.SubscribeOpts{Actor: bob, Selector: s})
	}

	const nPages = 300
	pages := make([]*event.Sub, nPages)
	for i := range pages {
		pages[i] = sub(sel(nil, fmt.Sprintf("hypothesis:p%d", i)))
	}
	onType := sub(sel([]string{"hypothesis.updated"}, ""))
	twice := sub(sel([]string{"hypothesis.*", "hypothesis.updated"}, "")) // filed under both
	otherType := sub(sel([]string{"paper.created"}, ""))
	otherPrefix := sub(sel([]string{"paper.*"}, ""))
	everything := sub(nil)
	star := sub(sel([]string{"*"}, ""))

	// An update of page 7's artifact, pinned to the version it made.
	v0 := event.DispatchVisits(h)
	upd := commitRef(t, e, "hypothesis.updated", "hypothesis:p7@sha256:1f")
	for who, s := range map[string]*event.Sub{"page 7": pages[7], "onType": onType, "twice": twice, "everything": everything, "star": star} {
		if got := next(t, s, who).Cursor.ID; got != upd {
			t.Fatalf("%s got event %d, want the update %d", who, got, upd)
		}
	}
	v1 := event.DispatchVisits(h)
	// page 7, onType, twice (once), everything, star.
	if got := v1 - v0; got != 5 {
		t.Errorf("the update visited %d subscribers, want 5 of the %d (page 7, its type, its prefix, the two on every event)", got, h.Subscribers())
	}

	// A paper: none of the pages, nor the hypothesis subscribers.
	paper := commitRef(t, e, "paper.created", "paper:x1")
	for who, s := range map[string]*event.Sub{"otherType": otherType, "otherPrefix": otherPrefix, "everything": everything, "star": star} {
		if got := next(t, s, who).Cursor.ID; got != paper {
			t.Fatalf("%s got event %d, want the paper %d", who, got, paper)
		}
	}
	if got := event.DispatchVisits(h) - v1; got != 4 {
		t.Errorf("the paper visited %d subscribers, want 4", got)
	}

	// Both events are dispatched (the paper reached everything after the
	// update did): nobody holds an event that was not for them, and the
	// subscriber filed twice got the update once.
	for i, p := range pages {
		if len(p.C) != 0 {
			t.Errorf("page %d holds %d events; it follows another artifact", i, len(p.C))
		}
	}
	for who, s := range map[string]*event.Sub{"onType": onType, "twice": twice} {
		if len(s.C) != 0 {
			t.Errorf("%s holds %d more events, want none (the update once, never the paper)", who, len(s.C))
		}
	}
	if h.Subscribers() != nPages+6 {
		t.Errorf("the hub has %d subscribers, want %d", h.Subscribers(), nPages+6)
	}
}
