package event

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/auth"
)

// A batch of events is handed to each subscriber in order, and each is told
// once, after the batch: its transport can then write the run together. A
// subscriber dropped within the batch is not told.
func TestDispatchTellsEachSubscriberOncePerBatch(t *testing.T) {
	h := NewHub(HubOpts{Listen: &pgx.ConnConfig{}, Logger: slog.New(slog.DiscardHandler), Buffer: 8})
	reader := auth.Actor{ID: "reader", Kind: "human", Permissions: []auth.Permission{auth.PermViewer}}
	feed, err := NewSelector([]string{"hypothesis.*"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	type sub struct {
		sink        *Sink[*Event]
		told, ended int
	}
	subscribe := func(buffer int) *sub {
		s := &sub{sink: NewSink(func(e *Event) *Event { return e })}
		h.Subscribe(t.Context(), SubscribeOpts{Actor: reader, Selector: feed, Sink: s.sink,
			Ready: func() { s.told++ }, End: func(string) { s.ended++ }, buffer: buffer})
		return s
	}
	keeping, small := subscribe(0), subscribe(2)
	var evs []*Event
	for i := range 5 {
		ref := fmt.Sprintf("hypothesis:h%d", i)
		evs = append(evs, &Event{Cursor: Cursor{XID: uint64(i + 1), ID: int64(i + 1)}, Type: "hypothesis.created", Ref: &ref, Payload: []byte(`{}`)})
	}
	h.dispatch(evs...)
	if keeping.told != 1 {
		t.Errorf("told %d times for a batch of 5, want once", keeping.told)
	}
	for i := range 5 {
		if !keeping.sink.Next() {
			t.Fatalf("event %d of 5 not queued", i)
		}
		if e := <-keeping.sink.C; e != evs[i] {
			t.Errorf("event %d: %v, want %v", i, e.Cursor, evs[i].Cursor)
		}
	}
	if small.ended != 1 || small.told != 0 {
		t.Errorf("the subscriber with a queue of 2: ended %d, told %d; want dropped and not told", small.ended, small.told)
	}
	h.dispatch(evs...) // dispatched already: nothing happens
	if keeping.told != 1 || keeping.sink.Next() {
		t.Error("a batch dispatched twice was handed out again")
	}
}
