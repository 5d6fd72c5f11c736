package wsconn_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
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

// feed is one claimed subscription as its resolver sees it: values go on ch,
// then Ready; End ends it.
type feed struct {
	st ondemand.Stream
	ch chan string
}

func (f feed) push(v string) { f.ch <- v; f.st.Ready() }

// claimedEnv is a server whose subscription resolver claims its stream, as
// the event hub's does: the handler must only be called when a value waits.
// early, when set, is pushed while the resolver runs (an event that arrives
// before the transport has the handler).
type claimedEnv struct {
	url   string
	feeds chan feed
}

func newClaimedEnv(t *testing.T, early string) *claimedEnv {
	t.Helper()
	e := &claimedEnv{feeds: make(chan feed, 64)}
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
			st := ondemand.Claim(ctx)
			if st == nil {
				return graphql.OneShot(graphql.ErrorResponse(ctx, "the transport offered no stream to claim"))
			}
			f := feed{st: st, ch: make(chan string, 16)}
			if early != "" {
				f.push(early)
			}
			e.feeds <- f
			return func(ctx context.Context) *graphql.Response {
				select {
				case v := <-f.ch:
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
