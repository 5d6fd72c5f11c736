package event

// DispatchVisits is how many subscribers the hub has checked against an event
// so far. It waits for a dispatch under way: once a subscriber has received an
// event, the count includes every subscriber that event visited.
func DispatchVisits(h *Hub) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.subs.visits
}
