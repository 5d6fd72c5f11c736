package wsconn_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/scidex/substrate/internal/ondemand"
	"github.com/scidex/substrate/internal/wsconn"
)

// feed is one claimed subscription as its resolver sees it: push queues a
// value and says Ready; the transport's Next moves the oldest onto ch.
type feed struct {
	st ondemand.Stream
	*queue
}

type queue struct {
	mu sync.Mutex
	q  []string
	ch chan string // room for one
}

func (q *queue) Next() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.q) == 0 {
		return false
	}
	select {
	case q.ch <- q.q[0]:
	default:
		panic("Next called before the handler took the value before")
	}
	q.q = q.q[1:]
	return true
}

// sharedQueue is a queue whose values may share responses, keyed by value.
type sharedQueue struct{ *queue }

func (q sharedQueue) Peek() (any, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.q) == 0 {
		return nil, false
	}
	return q.q[0], true
}

func (q sharedQueue) Skip() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.q = q.q[1:]
}

func (f feed) push(v string) {
	f.mu.Lock()
	f.q = append(f.q, v)
	f.mu.Unlock()
	f.st.Ready()
}

// claimedEnv is a server whose subscription resolver claims its stream, as
// the event hub's does: the handler must only be called when a value waits.
// early, when set, is pushed while the resolver runs (an event that arrives
// before the transport has the handler).
type claimedEnv struct {
	url   string
	feeds chan feed
	// shared makes the sources ondemand.Shared; calls counts the handler's
	// calls (each an execution and an encoding).
	shared bool
	calls  atomic.Int64
}

func newClaimedEnv(t *testing.T, early string) *claimedEnv {
	return newClaimedEnvShared(t, early, false)
}

func newClaimedEnvShared(t *testing.T, early string, shared bool) *claimedEnv {
	t.Helper()
	e := &claimedEnv{feeds: make(chan feed, 64), shared: shared}
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `type Query { name: String! } type Subscription { tick: String! }`})
	srv := handler.New(&graphql.ExecutableSchemaMock{
		SchemaFunc: func() *ast.Schema { return schema },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) {
			return 0, false
		},
		ExecFunc: func(ctx context.Context) graphql.ResponseHandler {
			if graphql.GetOperationContext(ctx).Operation.Operation != ast.Subscription {
				return graphql.OneShot(&graphql.Response{Data: []byte(`{"name":"q"}`)})
			}
			q := &queue{ch: make(chan string, 1)}
			var src ondemand.Source = q
			if e.shared {
				src = sharedQueue{q}
			}
			st := ondemand.Claim(ctx, src)
			if st == nil {
				return graphql.OneShot(graphql.ErrorResponse(ctx, "the transport offered no stream to claim"))
			}
			f := feed{st: st, queue: q}
			if early != "" {
				f.push(early)
			}
			e.feeds <- f
			return func(ctx context.Context) *graphql.Response {
				e.calls.Add(1)
				select {
				case v := <-f.ch:
					if v == "fail" {
						return graphql.ErrorResponse(ctx, "failed for %s", graphql.GetOperationContext(ctx).OperationName)
					}
					b, _ := json.Marshal(map[string]string{"tick": v})
					return &graphql.Response{Data: b}
				default:
					// What a handler waiting on its channel would do here is
					// block: the transport called it with nothing ready.
					return graphql.ErrorResponse(ctx, "handler called with nothing ready")
				}
			}
		},
	})
	srv.AddTransport(wsconn.Transport{Websocket: transport.Websocket{Implementation: wsconn.New(wsconn.Options{})}})
	hs := httptest.NewServer(wsconn.Middleware(srv))
	t.Cleanup(hs.Close)
	e.url = "ws" + strings.TrimPrefix(hs.URL, "http")
	return e
}

func (e *claimedEnv) connect(t *testing.T) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{transportWS}, HandshakeTimeout: waitFor}
	c, _, err := d.Dial(e.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	sendRaw(t, c, `{"type":"connection_init"}`)
	expect(t, c, "connection_ack", "")
	return c
}

func (e *claimedEnv) nextFeed(t *testing.T) feed {
	t.Helper()
	select {
	case f := <-e.feeds:
		return f
	case <-time.After(waitFor):
		t.Fatal("the subscription's resolver did not run")
		return feed{}
	}
}

// A claimed subscription is delivered on Ready, in order, and completed on
// End; the handler is never called to wait.
func TestClaimedSubscription(t *testing.T) {
	e := newClaimedEnv(t, "")
	c := e.connect(t)
	subscribe(t, c, "a", `{"query":"subscription { tick }"}`)
	f := e.nextFeed(t)
	for i := range 3 {
		f.push(strconv.Itoa(i))
	}
	for i := range 3 {
		jsonEq(t, expect(t, c, "next", "a").Payload, `{"data":{"tick":"`+strconv.Itoa(i)+`"}}`)
	}
	f.push("last")
	f.st.End()
	jsonEq(t, expect(t, c, "next", "a").Payload, `{"data":{"tick":"last"}}`)
	expect(t, c, "complete", "a")

	// The id is free again, and a query over the socket still works.
	subscribe(t, c, "a", `{"query":"subscription { tick }"}`)
	f = e.nextFeed(t)
	f.push("again")
	jsonEq(t, expect(t, c, "next", "a").Payload, `{"data":{"tick":"again"}}`)
	subscribe(t, c, "q", `{"query":"{ name }"}`)
	jsonEq(t, expect(t, c, "next", "q").Payload, `{"data":{"name":"q"}}`)
	expect(t, c, "complete", "q")
}

// An event that arrives while the resolver still runs is delivered once the
// transport has the handler.
func TestClaimedSubscriptionEarlyEvent(t *testing.T) {
	e := newClaimedEnv(t, "early")
	c := e.connect(t)
	subscribe(t, c, "a", `{"query":"subscription { tick }"}`)
	e.nextFeed(t)
	jsonEq(t, expect(t, c, "next", "a").Payload, `{"data":{"tick":"early"}}`)
}

// After the client's complete nothing more is sent for the operation, though
// its source goes on; End after it sends no complete.
func TestClaimedSubscriptionClientComplete(t *testing.T) {
	e := newClaimedEnv(t, "")
	c := e.connect(t)
	subscribe(t, c, "a", `{"query":"subscription { tick }"}`)
	f := e.nextFeed(t)
	sendRaw(t, c, `{"type":"complete","id":"a"}`)
	// The server reads in order: once the ping is answered, it has the complete.
	sendRaw(t, c, `{"type":"ping"}`)
	expect(t, c, "pong", "")
	f.push("late")
	f.st.End()
	// A ping's pong is the next message: nothing came for "a" in between.
	sendRaw(t, c, `{"type":"ping"}`)
	expect(t, c, "pong", "")
}

// Many claimed subscriptions on one connection each get their own values in
// their own order, pushed from many goroutines at once.
func TestClaimedSubscriptionsInterleave(t *testing.T) {
	const subs, each = 20, 10
	e := newClaimedEnv(t, "")
	c := e.connect(t)
	feeds := make([]feed, subs)
	for i := range subs {
		subscribe(t, c, "s"+strconv.Itoa(i), `{"query":"subscription { tick }"}`)
		feeds[i] = e.nextFeed(t)
	}
	for i, f := range feeds {
		go func() {
			for j := range each {
				f.push(strconv.Itoa(i) + "." + strconv.Itoa(j))
			}
			f.st.End()
		}()
	}
	got := map[string]int{} // next value expected, by id
	completed := 0
	for completed < subs {
		m := read(t, c)
		n, err := strconv.Atoi(strings.TrimPrefix(m.ID, "s"))
		if err != nil || n >= subs {
			t.Fatalf("message for an unknown operation: %s %q %s", m.Type, m.ID, m.Payload)
		}
		switch m.Type {
		case "next":
			want := `{"data":{"tick":"` + strconv.Itoa(n) + "." + strconv.Itoa(got[m.ID]) + `"}}`
			jsonEq(t, m.Payload, want)
			got[m.ID]++
		case "complete":
			if got[m.ID] != each {
				t.Fatalf("%s completed after %d values, want %d", m.ID, got[m.ID], each)
			}
			completed++
		default:
			t.Fatalf("got %s %q %s", m.Type, m.ID, m.Payload)
		}
	}
}

// Operations with the same document and variables whose shared sources name
// a value alike get one execution and encoding for it; another document, or
// a response with errors (which carries the operation's own details), gets
// its own.
func TestSharedResponsesEncodedOnce(t *testing.T) {
	e := newClaimedEnvShared(t, "", true)
	const op = `{"query":"subscription { tick }"}`
	var conns []*websocket.Conn
	var feeds []feed
	for range 3 {
		c := e.connect(t)
		subscribe(t, c, "a", op)
		conns, feeds = append(conns, c), append(feeds, e.nextFeed(t))
	}
	other := e.connect(t)
	subscribe(t, other, "b", `{"query":"subscription Named { tick }"}`)
	otherFeed := e.nextFeed(t)

	for i, v := range []string{"x", "y"} {
		for j, f := range feeds {
			f.push(v)
			jsonEq(t, expect(t, conns[j], "next", "a").Payload, `{"data":{"tick":"`+v+`"}}`)
		}
		if n := e.calls.Load(); n != int64(i+1) {
			t.Fatalf("after %d values to 3 subscribers of one operation the handler ran %d times, want %d", i+1, n, i+1)
		}
	}
	otherFeed.push("x")
	jsonEq(t, expect(t, other, "next", "b").Payload, `{"data":{"tick":"x"}}`)
	if n := e.calls.Load(); n != 3 {
		t.Fatalf("another document's value: the handler ran %d times in all, want 3", n)
	}
	for j, f := range feeds {
		f.push("fail")
		if m := expect(t, conns[j], "next", "a"); !strings.Contains(string(m.Payload), "failed") {
			t.Fatalf("got %s, want the error", m.Payload)
		}
	}
	if n := e.calls.Load(); n != 6 {
		t.Fatalf("an error response was shared: the handler ran %d times in all, want 6", n)
	}
}
