package event_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/event"
)

// sinkProbe is a Sink of cursors that counts its Ready calls and reports its end.
type sinkProbe struct {
	k      *event.Sink[event.Cursor]
	ready  atomic.Int64
	readyC chan struct{} // a value per Ready
	ended  chan string
}

func newSinkProbe() *sinkProbe {
	return &sinkProbe{k: event.NewSink(func(e *event.Event) event.Cursor { return e.Cursor }),
		readyC: make(chan struct{}, 1024), ended: make(chan string, 2)}
}

func (p *sinkProbe) opts(since *event.Cursor) event.SubscribeOpts {
	return event.SubscribeOpts{Actor: admin, Since: since, Sink: p.k,
		Ready: func() {
			p.ready.Add(1)
			select {
			case p.readyC <- struct{}{}:
			default:
			}
		}, End: func(reason string) { p.ended <- reason }}
}

// take is the sink's next value, as a transport takes it: Next after Ready.
func (p *sinkProbe) take(t *testing.T, who string) event.Cursor {
	t.Helper()
	for !p.k.Next() {
		select {
		case <-p.readyC:
		case <-time.After(wait):
			t.Fatalf("%s: nothing queued within %s", who, wait)
		}
	}
	return <-p.k.C
}

func (p *sinkProbe) waitEnd(t *testing.T, who string) string {
	t.Helper()
	select {
	case r := <-p.ended:
		select {
		case again := <-p.ended:
			t.Fatalf("%s: the sink's end ran twice (%q, then %q)", who, r, again)
		default:
		}
		return r
	case <-time.After(wait):
		t.Fatalf("%s: the sink's end did not run within %s", who, wait)
	}
	return ""
}

// A subscriber with a sink gets what a channel subscriber gets, backlog and
// live, each event made Ready as it is queued; when it falls behind it is
// dropped with a cursor that resumes exactly at the oldest event it had not
// taken, and its end runs once, with the reason.
func TestHubSinkDeliversAndDrops(t *testing.T) {
	const buffer = 8
	e := newEnv(t)
	h, _ := runHub(t, e, event.HubOpts{Buffer: buffer})
	ctx := t.Context()
	reader := h.Subscribe(ctx, event.SubscribeOpts{Actor: admin})
	c0 := h.Position()
	var backlog []event.Cursor
	for range 3 {
		commitOne(t, e, "hypothesis.created")
		backlog = append(backlog, next(t, reader, "reader").Cursor)
	}

	p := newSinkProbe()
	sub := h.Subscribe(ctx, p.opts(&c0))
	if sub.C != nil {
		t.Fatal("a subscriber with a sink has a channel of its own")
	}
	for i := range 2 {
		if got := p.take(t, "sink"); got != backlog[i] {
			t.Fatalf("sink's backlog event %d is %+v, want %+v", i, got, backlog[i])
		}
	}
	waitFor(t, "the sink subscriber joins the live stream", func() bool { return h.Subscribers() == 2 })

	var written []event.Cursor
	for range 3 * buffer {
		commitOne(t, e, "hypothesis.created")
		written = append(written, next(t, reader, "reader").Cursor)
	}
	reason := p.waitEnd(t, "sink")
	waitDone(t, sub, "sink subscriber")
	if reason == "" || reason != sub.Reason() {
		t.Fatalf("the sink ended with %q, the subscription with %q: want the same reason", reason, sub.Reason())
	}
	if n := h.Subscribers(); n != 1 {
		t.Errorf("after the drop the hub has %d subscribers, want 1", n)
	}
	// Everything queued was made Ready: the two taken and a full queue.
	if n := p.ready.Load(); n != 2+buffer {
		t.Errorf("%d Ready calls, want %d", n, 2+buffer)
	}
	// The subscription is over: its queue is emptied (the backlog's third
	// and live events until it was full were on it).
	if p.k.Next() {
		t.Errorf("after the drop the sink still hands out %+v", <-p.k.C)
	}
	m := resumeRE.FindStringSubmatch(reason)
	if m == nil {
		t.Fatalf("reason %q names no cursor to resume from", reason)
	}
	resume, err := event.ParseCursor(m[1], "since")
	if err != nil {
		t.Fatalf("reason %q: %v", reason, err)
	}
	// Resuming there replays the first event it had not taken, and nothing it had.
	if after := logAfter(t, e, resume); len(after) == 0 || after[0] != backlog[2] {
		t.Errorf("resuming since %+v replays from %v, want from %+v (the oldest event it had not taken)", resume, after, backlog[2])
	}
}

// A sink's end runs once when its subscriber leaves (reason "") and when the
// hub stops (the hub's reason), live or still replaying its backlog.
func TestHubSinkEnds(t *testing.T) {
	e := newEnv(t)
	// A queue of one: a backlog of three fills it, and the replay waits.
	h, stop := runHub(t, e, event.HubOpts{Buffer: 1})
	reader := h.Subscribe(t.Context(), event.SubscribeOpts{Actor: admin})
	c0 := h.Position()
	for range 3 {
		commitOne(t, e, "hypothesis.created")
		next(t, reader, "reader") // dispatched before the subscriptions below
	}

	leaving := newSinkProbe()
	lctx, leave := context.WithCancel(t.Context())
	h.Subscribe(lctx, leaving.opts(nil))
	leave()
	if r := leaving.waitEnd(t, "leaving"); r != "" {
		t.Errorf("a subscriber that left ended with reason %q, want none", r)
	}

	live := newSinkProbe()
	h.Subscribe(t.Context(), live.opts(nil))
	replaying := newSinkProbe()
	h.Subscribe(t.Context(), replaying.opts(&c0))
	replaying.take(t, "replaying") // the replay runs, and waits for room again
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		name string
		p    *sinkProbe
	}{{"live", live}, {"replaying", replaying}} {
		if r := p.p.waitEnd(t, p.name); r == "" {
			t.Errorf("%s: ended without the hub's reason when it stopped", p.name)
		}
	}
}
