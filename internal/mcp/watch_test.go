package mcp

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The event of the version a subscriber read, arriving after it subscribed,
// is no news to it; any other change is, and so is every change after one.
// Changes coalesce: one notification per server and URI per take.
func TestWatchersSkipTheVersionRead(t *testing.T) {
	w := newWatchers()
	srv := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	x := watcher{srv: srv, uri: "scidex://hypothesis/h"}
	w.add("hypothesis:h", x, "sha256:a")
	w.changed("paper:p", "sha256:z") // nobody watches it
	if len(w.pending) != 0 {
		t.Fatalf("an unwatched change is pending: %v", w.pending)
	}
	w.changed("hypothesis:h", "sha256:a")
	if got := w.take(); len(got) != 0 {
		t.Fatalf("the version read was notified: %v", got)
	}
	w.changed("hypothesis:h", "sha256:b")
	w.changed("hypothesis:h", "") // a signal: coalesced with the update
	if got := w.take(); len(got) != 1 || got[0].uri != x.uri {
		t.Fatalf("after a new version: %v, want one notification of %s", got, x.uri)
	}
	w.changed("hypothesis:h", "sha256:a") // e.g. a revert to what was first read: news now
	if got := w.take(); len(got) != 1 {
		t.Fatalf("a later change: %v, want one notification", got)
	}
	w.remove("hypothesis:h", x)
	w.changed("hypothesis:h", "sha256:c")
	if got := w.take(); len(got) != 0 || len(w.byRef) != 0 {
		t.Fatalf("after unsubscribing: %v (%d refs watched)", got, len(w.byRef))
	}
}
