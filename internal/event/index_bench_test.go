package event

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/auth"
)

// BenchmarkDispatch is the cost of dispatching one event about one artifact
// when n subscribers each follow their own artifact (Prism pages) and 10
// follow a broad feed: "index" is the hub's dispatch, "scan" checks every
// subscriber as the hub did before it had an index (TARGETS.md P4a: the cost
// of an event is independent of the subscribers it does not match).
//
//	scripts/test -run '^$' -bench BenchmarkDispatch ./internal/event/
func BenchmarkDispatch(b *testing.B) {
	viewer := auth.Actor{ID: "page-reader", Kind: "human", Permissions: []auth.Permission{auth.PermViewer}}
	for _, n := range []int{10, 100, 1000, 10_000, 100_000} {
		for _, mode := range []string{"index", "scan"} {
			if mode == "scan" && n > 10_000 && testing.Short() {
				continue
			}
			b.Run(fmt.Sprintf("%s/subscribers=%d", mode, n), func(b *testing.B) {
				h := NewHub(HubOpts{Listen: &pgx.ConnConfig{}, Logger: slog.New(slog.DiscardHandler), Buffer: 4})
				ctx := b.Context()
				pages := make([]*Sub, n)
				refs := make([]string, n)
				for i := range pages {
					refs[i] = fmt.Sprintf("hypothesis:h%d", i)
					sel, err := NewSelector(nil, nil, refs[i])
					if err != nil {
						b.Fatal(err)
					}
					pages[i] = h.Subscribe(ctx, SubscribeOpts{Actor: viewer, Selector: sel})
				}
				feed, err := NewSelector([]string{"hypothesis.*"}, nil, "")
				if err != nil {
					b.Fatal(err)
				}
				broad := make([]*Sub, 10)
				for i := range broad {
					broad[i] = h.Subscribe(ctx, SubscribeOpts{Actor: viewer, Selector: feed})
				}
				pinned := make([]string, 1024)
				for i := range pinned {
					pinned[i] = refs[(i*7919)%n] + "@sha256:00"
				}
				b.ResetTimer()
				for k := range b.N {
					e := &Event{Cursor: Cursor{XID: uint64(k + 1), ID: int64(k + 1)}, Type: "hypothesis.updated",
						Ref: &pinned[k%len(pinned)], Payload: []byte(`{}`)}
					if mode == "index" {
						h.dispatch(e)
					} else {
						h.scanDispatch(e)
					}
					<-pages[(k%len(pinned)*7919)%n].C
					for _, s := range broad {
						<-s.C
					}
				}
				b.StopTimer()
				if h.Subscribers() != n+len(broad) {
					b.Fatalf("%d subscribers left of %d: a slow one was dropped", h.Subscribers(), n+len(broad))
				}
				if err := context.Cause(ctx); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// scanDispatch is dispatch as it was before the index: every subscriber
// checked against every event.
func (h *Hub) scanDispatch(e *Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pos = e.Cursor
	for s := range h.subs.all {
		if s.wants(e) {
			select {
			case s.ch <- e:
			default:
				panic("a subscriber fell behind")
			}
		}
	}
}
