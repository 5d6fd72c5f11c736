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

// watchers are the resource subscriptions, by artifact ref, each with the
// content hash its subscriber read when subscribing, and the refs that
// changed since the notifier last looked, each with the version the latest
// change made ("" when it made none: a signal, a link). changed is called
// for every event the server sees, so it is a map lookup when nobody watches.
//
// The hashes drop one false alarm: the event of the very version a
// subscriber read may reach this process after the subscription (the hub
// follows the log a moment behind), and it is no change to that subscriber.
type watchers struct {
	mu      sync.Mutex
	byRef   map[string]map[watcher]string
	pending map[string]string
	wake    chan struct{} // one slot: a wake-up is pending
}

func newWatchers() *watchers {
	return &watchers{byRef: map[string]map[watcher]string{}, pending: map[string]string{}, wake: make(chan struct{}, 1)}
}

// add records a subscription whose subscriber has read version seen.
func (w *watchers) add(key string, x watcher, seen string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byRef[key] == nil {
		w.byRef[key] = map[watcher]string{}
	}
	w.byRef[key][x] = seen
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

// changed says the artifact key changed, to version hash ("" for a change
// that made no version).
func (w *watchers) changed(key, hash string) {
	w.mu.Lock()
	_, watched := w.byRef[key]
	if watched {
		w.pending[key] = hash
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
	sent := map[target]bool{}
	var out []target
	for key, hash := range w.pending {
		for x, read := range w.byRef[key] {
			if hash != "" && hash == read {
				continue // the version this subscriber read
			}
			w.byRef[key][x] = "" // from now on every change is news
			t := target{x.srv, x.uri}
			if !sent[t] {
				sent[t] = true
				out = append(out, t)
			}
		}
	}
	clear(w.pending)
	return out
}
