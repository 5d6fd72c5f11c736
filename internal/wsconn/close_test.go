package wsconn_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"

	"github.com/scidex/substrate/internal/wsconn"
)

// initContexts returns an InitFunc that accepts every connection and hands
// its context to the test.
func initContexts() (transport.WebsocketInitFunc, chan context.Context) {
	ch := make(chan context.Context, 1)
	return func(ctx context.Context, _ transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		ch <- ctx
		return ctx, nil, nil
	}, ch
}

func TestCloseConnFromInitContext(t *testing.T) {
	initFunc, ctxs := initContexts()
	e := newEnv(t, transport.Websocket{InitFunc: initFunc}, wsconn.Options{})
	c := e.connectAcked(t)
	ctx := <-ctxs

	if !wsconn.CloseConn(ctx, 4000, "bye") {
		t.Fatal("CloseConn returned false")
	}
	expectClose(t, c, 4000, "bye")
	if wsconn.CloseConn(ctx, 4000, "again") {
		t.Fatal("second CloseConn returned true")
	}
}

func TestCloseConnFromResolverContext(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{})
	c := e.connectAcked(t)
	subscribe(t, c, "1", subQuery)
	ctx := e.nextStarted(t)

	long := "Forbidden: " + strings.Repeat("é", 100)
	if !wsconn.CloseConn(ctx, wsconn.CloseForbidden, long) {
		t.Fatal("CloseConn returned false")
	}
	// The reason is cut to 123 bytes on a rune boundary.
	expectClose(t, c, 4403, long[:len("Forbidden: ")+2*56])
	e.waitEnded(t, 1) // gqlgen cancelled the subscription
}

func TestCloseConnWithoutConnection(t *testing.T) {
	if wsconn.CloseConn(context.Background(), 4000, "x") {
		t.Fatal("CloseConn without a connection returned true")
	}
	if wsconn.CloseAt(context.Background(), time.Now()) {
		t.Fatal("CloseAt without a connection returned true")
	}
	initFunc, ctxs := initContexts()
	e := newEnv(t, transport.Websocket{InitFunc: initFunc}, wsconn.Options{})
	c := e.connectAcked(t)
	ctx := <-ctxs
	for _, code := range []int{0, 1005, 1006, 1015, 2999, 5000} {
		if wsconn.CloseConn(ctx, code, "x") {
			t.Fatalf("CloseConn with code %d returned true", code)
		}
	}
	sendRaw(t, c, `{"type":"ping"}`)
	expect(t, c, "pong", "")
}

func TestCloseAt(t *testing.T) {
	expiries := make(chan time.Time, 1)
	e := newEnv(t, transport.Websocket{
		InitFunc: func(ctx context.Context, _ transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			expiry := time.Now().Add(40 * time.Millisecond)
			if !wsconn.CloseAt(ctx, expiry) {
				t.Error("CloseAt returned false")
			}
			expiries <- expiry
			return ctx, nil, nil
		},
	}, wsconn.Options{})
	c := e.connectAcked(t)
	expiry := <-expiries
	subscribe(t, c, "1", subQuery)
	e.gql.SendNextSubscriptionMessage()
	expect(t, c, "next", "1")

	expectClose(t, c, 4401, "Token expired")
	if early := time.Until(expiry); early > 0 {
		t.Fatalf("closed %v before the expiry", early)
	}
	e.waitEnded(t, 1)
}

func TestCloseAtCancelled(t *testing.T) {
	initFunc, ctxs := initContexts()
	e := newEnv(t, transport.Websocket{InitFunc: initFunc}, wsconn.Options{})
	c := e.connectAcked(t)
	ctx := <-ctxs

	wsconn.CloseAt(ctx, time.Now().Add(20*time.Millisecond))
	wsconn.CloseAt(ctx, time.Time{})
	// Replaced by a nearer one, which is the one that fires.
	wsconn.CloseAt(ctx, time.Now().Add(time.Hour))
	wsconn.CloseAt(ctx, time.Now().Add(10*time.Millisecond))
	expectClose(t, c, 4401, "Token expired")
}

func TestClientCloses(t *testing.T) {
	closed := make(chan int, 1)
	e := newEnv(t, transport.Websocket{
		CloseFunc: func(_ context.Context, code int) { closed <- code },
	}, wsconn.Options{})
	c := e.connectAcked(t)
	subscribe(t, c, "1", subQuery)
	e.nextStarted(t)
	bye := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
	if err := c.WriteControl(websocket.CloseMessage, bye, time.Now().Add(waitFor)); err != nil {
		t.Fatal(err)
	}
	e.waitEnded(t, 1)
	select {
	case <-closed:
	case <-time.After(waitFor):
		t.Fatal("CloseFunc not called")
	}
}

func TestMissingPong(t *testing.T) {
	for _, p := range pingers {
		t.Run(p.name, func(t *testing.T) {
			e := newEnv(t, p.ws, p.opts)
			c := e.connectAcked(t)
			// Pings go unanswered; the server gives up after twice the interval.
			_ = c.SetReadDeadline(time.Now().Add(waitFor))
			pings := 0
			for {
				_, data, err := c.ReadMessage()
				if err == nil {
					if string(data) != `{"type":"ping"}` {
						t.Fatalf("got %s, want ping", data)
					}
					pings++
					continue
				}
				var ce *websocket.CloseError
				if !errors.As(err, &ce) || ce.Code != websocket.CloseNormalClosure {
					t.Fatalf("got %v after %d pings, want close 1000", err, pings)
				}
				if pings == 0 {
					t.Fatal("closed before any ping was sent")
				}
				return
			}
		})
	}
}

func TestWithoutMiddleware(t *testing.T) {
	initFunc, ctxs := initContexts()
	h := testserver.New()
	h.AddTransport(wsconn.Transport{Websocket: transport.Websocket{Implementation: wsconn.New(wsconn.Options{}), InitFunc: initFunc}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")

	// The protocol is enforced; CloseConn cannot find the connection.
	c, _, err := (&websocket.Dialer{Subprotocols: []string{transportWS}}).Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sendRaw(t, c, `{"type":"connection_init"}`)
	expect(t, c, "connection_ack", "")
	if wsconn.CloseConn(<-ctxs, 4000, "x") {
		t.Fatal("CloseConn without Middleware returned true")
	}
	sendRaw(t, c, `{"type":"connection_init"}`)
	expectClose(t, c, 4429, "Too many initialisation requests")

	// A refused origin still gets 403 (gqlgen appends its own error body).
	_, resp, err := (&websocket.Dialer{}).Dial(url, http.Header{"Origin": {"https://evil.example"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("dial: %v, %v", err, resp)
	}
}
