package metrics

import "sync"

// other is the label value of whatever is not kept as itself: a tool name
// past the cap, an unknown error code, a path under no route.
const other = "other"

// names keeps the first max distinct names as label values and maps every
// later one to "other", so that a registry of tools that grows without bound
// cannot grow the series with it.
type names struct {
	max  int
	mu   sync.RWMutex
	kept map[string]struct{}
}

func newNames(max int) *names { return &names{max: max, kept: map[string]struct{}{}} }

// label is name as a label value: itself if kept (or now kept), else "other".
func (n *names) label(name string) string {
	if name == "" {
		return other
	}
	n.mu.RLock()
	_, ok := n.kept[name]
	n.mu.RUnlock()
	if ok {
		return name
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.kept[name]; ok {
		return name
	}
	if len(n.kept) >= n.max || len(name) > 128 {
		return other
	}
	n.kept[name] = struct{}{}
	return name
}
