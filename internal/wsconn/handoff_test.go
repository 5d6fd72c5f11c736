package wsconn_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"

	"github.com/scidex/substrate/internal/wsconn"
)

// Once a websocket is upgraded, net/http's handler returns (its buffers and
// goroutine go) while the websocket lives on: subscriptions still deliver,
// the operation's context is still live, and it ends when the client goes.
func TestHandlerReturnsAfterUpgrade(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{})
	returned := make(chan struct{}, 4)
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wsconn.Middleware(e.gql).ServeHTTP(w, r)
		returned <- struct{}{}
	}))
	t.Cleanup(e.srv.Close)
	c := e.connectAcked(t)
	subscribe(t, c, "s1", subQuery)
	ctx := e.nextStarted(t)
	select {
	case <-returned:
	case <-time.After(waitFor):
		t.Fatal("the HTTP handler did not return after the upgrade")
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("the subscription's context ended with the HTTP handler: %v", err)
	}
	e.gql.SendNextSubscriptionMessage()
	jsonEq(t, expect(t, c, "next", "s1").Payload, `{"data":{"name":"test"}}`)
	if !wsconn.CloseConn(ctx, 4000, "bye") {
		t.Fatal("CloseConn found no connection from the subscription's context")
	}
	expectClose(t, c, 4000, "bye")
	_ = c.Close()
	select {
	case <-ctx.Done():
	case <-time.After(waitFor):
		t.Fatal("the subscription's context did not end with the connection")
	}
}

// A refused upgrade is still answered on the request, before the handler returns.
func TestRefusedUpgradeIsAnswered(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{})
	_, resp, err := (&websocket.Dialer{}).Dial(e.url(), http.Header{"Origin": {"https://evil.example"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("dial from another origin: %v, %v; want 403", err, resp)
	}
	// A plain GET with an Upgrade header that is not a websocket handshake.
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL, nil)
	req.Header.Set("Upgrade", "h2c")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("non-websocket upgrade: %s, want 400", res.Status)
	}
}

// A panic while serving an upgrade is recovered, as net/http recovers one in
// a handler: the process lives, the client's connection is closed, after the
// upgrade with 1011.
func TestPanicServingUpgradeIsRecovered(t *testing.T) {
	im := wsconn.New(wsconn.Options{})
	srv := httptest.NewServer(wsconn.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/after" {
			if _, err := im.Accept(w, r, transport.WebsocketAcceptOptions{Subprotocols: []string{transportWS}}); err != nil {
				t.Errorf("accept: %v", err)
				return
			}
		}
		panic("boom")
	})))
	defer srv.Close()
	url := "ws" + srv.URL[len("http"):]
	d := websocket.Dialer{Subprotocols: []string{transportWS}, HandshakeTimeout: waitFor}
	if c, _, err := d.Dial(url+"/before", nil); err == nil {
		c.Close()
		t.Fatal("dial succeeded though the handler panicked before the upgrade")
	}
	c, _, err := d.Dial(url+"/after", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	expectClose(t, c, websocket.CloseInternalServerErr, "internal server error")
}
