package event_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/event"
)

// A follower that stalls long enough to be dropped still handles every event,
// in order, once each: it takes what was queued, then replays the rest from
// the log.
func TestFollowReplaysAfterADrop(t *testing.T) {
	const buffer = 2
	e := newEnv(t)
	h, _ := runHub(t, e, event.HubOpts{Buffer: buffer, FollowBuffer: buffer})
	sel, err := event.NewSelector([]string{"hypothesis.*"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	stall := make(chan struct{})
	got := make(chan int64, 64)
	first := true
	run := h.Follow(t.Context(), sel, func(ev *event.Event) {
		if first {
			first = false
			<-stall // until the hub has dropped this follower
		}
		got <- ev.Cursor.ID
	})
	done := make(chan error, 1)
	go func() { done <- run() }()
	waitFor(t, "the follower subscribes", func() bool { return h.Subscribers() == 1 })

	var want []int64
	for range 4 * buffer {
		want = append(want, commitOne(t, e, "hypothesis.created"))
		commitOne(t, e, "paper.created") // not selected: never handed over
	}
	waitFor(t, "the hub drops the stalled follower", func() bool { return h.Subscribers() == 0 })
	close(stall)
	var seen []int64
	for len(seen) < len(want) {
		select {
		case id := <-got:
			seen = append(seen, id)
		case err := <-done:
			t.Fatalf("the follower stopped after %v: %v", seen, err)
		case <-time.After(wait):
			t.Fatalf("the follower handled %v, then nothing more", seen)
		}
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("the follower handled %v, want %v", seen, want)
	}
	// And it is live again: a later event arrives, and nothing twice.
	later := commitOne(t, e, "hypothesis.created")
	select {
	case id := <-got:
		if id != later {
			t.Fatalf("after the replay the follower got %d, want %d", id, later)
		}
	case <-time.After(wait):
		t.Fatal("after the replay the follower got no live event")
	}
}
