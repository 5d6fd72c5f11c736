package dispatch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/event"
)

// until waits for what a worker does on its own goroutine: it checks cond,
// and again after each event about the artifact ref, subscribed before the
// first check so that no change between a check and the wait is missed. It
// fails the test when 30s pass without cond holding.
func until(t *testing.T, e *apitest.Env, ref, what string, cond func() bool) {
	t.Helper()
	r, _, _ := strings.Cut(ref, "@")
	sel, err := event.NewSelector([]string{"*"}, nil, r)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sub := e.Hub.Subscribe(ctx, event.SubscribeOpts{Actor: auth.System(), Selector: sel})
	timeout := time.After(30 * time.Second)
	for !cond() {
		select {
		case <-sub.C:
		case <-sub.Done():
			t.Fatalf("%s: the event subscription ended: %s", what, sub.Reason())
		case <-timeout:
			t.Fatalf("%s: not within 30s", what)
		}
	}
}
