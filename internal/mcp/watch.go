package mcp

import (
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// watcher is one resource subscription: a session of an sdk server, and the
// URI exactly as it subscribed (notifications must name that URI).
type watcher struct {
	srv     *sdk.Server
	session *sdk.ServerSession
	uri     string
}

// target is where one notification goes: srv tells its sessions subscribed
// to uri.
type target struct {
	srv *sdk.Server
	uri string
}

// watchers are the resource subscriptions, by artifact ref, and the refs
// that changed since the notifier last looked. changed is called for every
// event the server sees, so it is a map lookup when nobody watches.
type watchers struct {
	mu      sync.Mutex
	byRef   map[string]map[watcher]struct{}
	pending map[string]struct{}
	wake    chan struct{} // one slot: a wake-up is pending
}

func newWatchers() *watchers {
	return &watchers{byRef: map[string]map[watcher]struct{}{}, pending: map[string]struct{}{}, wake: make(chan struct{}, 1)}
}

func (w *watchers) add(key string, x watcher) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byRef[key] == nil {
		w.byRef[key] = map[watcher]struct{}{}
	}
	w.byRef[key][x] = struct{}{}
}

func (w *watchers) remove(key string, x watcher) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byRef[key], x)
	if len(w.byRef[key]) == 0 {
		delete(w.byRef, key)
	}
}

// count is how many subscriptions there are to key.
func (w *watchers) count(key string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byRef[key])
}

func (w *watchers) changed(key string) {
	w.mu.Lock()
	_, watched := w.byRef[key]
	if watched {
		w.pending[key] = struct{}{}
	}
	w.mu.Unlock()
	if watched {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// take is where to send the pending notifications, one per sdk server and
// URI, and forgets them.
func (w *watchers) take() []target {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[target]bool{}
	var out []target
	for key := range w.pending {
		for x := range w.byRef[key] {
			t := target{x.srv, x.uri}
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	clear(w.pending)
	return out
}
