package drain_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/drain"
)

// Drain ends every open member, waits until each has removed itself (here
// later, from another goroutine, as a connection's handler does), and
// refuses members that open afterwards with its reason.
func TestDrainEndsWaitsAndRefuses(t *testing.T) {
	var s drain.Set[int]
	for i := range 3 {
		if ok, _ := s.Add(i); !ok {
			t.Fatalf("Add(%d) refused before Drain", i)
		}
	}
	s.Remove(0) // closed on its own before the shutdown
	var mu sync.Mutex
	var ended []int
	var wg sync.WaitGroup
	var removed atomic.Int64
	n, err := s.Drain(context.Background(), "going away", func(v int) {
		mu.Lock()
		ended = append(ended, v)
		mu.Unlock()
		// The member goes away later, on its own goroutine.
		wg.Go(func() { time.Sleep(10 * time.Millisecond); removed.Add(1); s.Remove(v) })
	})
	if err != nil || n != 2 {
		t.Fatalf("Drain: %d, %v; want 2 members ended", n, err)
	}
	if removed.Load() != 2 {
		t.Fatalf("Drain returned before its members were removed (%d of 2)", removed.Load())
	}
	mu.Lock()
	if len(ended) != 2 {
		t.Fatalf("ended %v, want 1 and 2", ended)
	}
	mu.Unlock()
	wg.Wait()
	if ok, reason := s.Add(7); ok || reason != "going away" {
		t.Fatalf("Add after Drain: %v %q, want refused with the reason", ok, reason)
	}
	if n, err := s.Drain(context.Background(), "again", func(int) { t.Error("nothing is open") }); n != 0 || err != nil {
		t.Fatalf("a second Drain: %d, %v", n, err)
	}
	if _, reason := s.Add(8); reason != "going away" {
		t.Fatalf("the first reason is kept: %q", reason)
	}
}

// A member that never goes away holds Drain only until ctx ends.
func TestDrainGivesUpWithItsContext(t *testing.T) {
	var s drain.Set[string]
	s.Add("stuck")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	n, err := s.Drain(ctx, "bye", func(string) {})
	if n != 1 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Drain: %d, %v; want 1 and the deadline", n, err)
	}
	s.Remove("stuck") // late: must not panic or block
}

// An empty set drains at once.
func TestDrainEmpty(t *testing.T) {
	var s drain.Set[*int]
	if n, err := s.Drain(context.Background(), "bye", func(*int) {}); n != 0 || err != nil {
		t.Fatalf("Drain: %d, %v", n, err)
	}
}
