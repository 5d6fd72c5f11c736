// Package drain is the set of long-lived connections a server ends itself
// when it shuts down: websockets (hijacked from net/http, whose Shutdown
// neither waits for nor closes them) and SSE streams (whose requests
// Shutdown waits for but cannot end). A connection joins the set when it
// opens and leaves it when it is closed; Drain ends each open one, refuses
// those that open afterwards, and waits for them to be gone.
package drain

import (
	"context"
	"sync"
)

// Set is the open members of one kind. Its zero value is an empty set, ready
// to use; it is safe for concurrent use.
type Set[T comparable] struct {
	mu      sync.Mutex
	open    map[T]struct{}
	closing bool
	reason  string
	empty   chan struct{} // closed once closing and no member is left
}

// Add registers v. Once Drain has begun it registers nothing and returns
// false with Drain's reason: the caller ends v at once, with that reason.
func (s *Set[T]) Add(v T) (ok bool, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false, s.reason
	}
	if s.open == nil {
		s.open = map[T]struct{}{}
	}
	s.open[v] = struct{}{}
	return true, ""
}

// Remove forgets v, once it is closed; removing a member not in the set is
// a no-op.
func (s *Set[T]) Remove(v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.open, v)
	if s.closing && len(s.open) == 0 && s.empty != nil {
		close(s.empty)
		s.empty = nil
	}
}

// Drain refuses new members from now on (Add reports reason), calls end for
// every open one (outside the set's lock: end may block, and a member may
// Remove itself from within it), and waits until each is removed or ctx
// ends. It returns how many members were open. A second Drain ends what is
// open then, with the first reason kept for later Adds.
func (s *Set[T]) Drain(ctx context.Context, reason string, end func(T)) (int, error) {
	s.mu.Lock()
	if !s.closing {
		s.closing, s.reason = true, reason
	}
	open := make([]T, 0, len(s.open))
	for v := range s.open {
		open = append(open, v)
	}
	empty := s.empty
	if empty == nil && len(s.open) > 0 {
		empty = make(chan struct{})
		s.empty = empty
	}
	s.mu.Unlock()
	for _, v := range open {
		end(v)
	}
	if empty == nil {
		return len(open), nil
	}
	select {
	case <-empty:
		return len(open), nil
	case <-ctx.Done():
		return len(open), ctx.Err()
	}
}
