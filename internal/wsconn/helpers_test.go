package wsconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"

	"github.com/scidex/substrate/internal/wsconn"
)

// waitFor bounds every wait for a frame that must arrive. Frames arrive in
// milliseconds; the bound only matters when a test fails.
const waitFor = 5 * time.Second

const (
	transportWS = "graphql-transport-ws"
	legacyWS    = "graphql-ws"
	subQuery    = `{"query":"subscription { name }"}`
)

type msg struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// env is a gqlgen test server (gqlgen's testserver schema, whose subscription
// the test drives) behind wsconn, in an httptest server.
type env struct {
	gql *testserver.TestServer
	srv *httptest.Server
	// started receives the context of each operation gqlgen starts (a
	// resolver's view); ended receives a value when one finishes.
	started chan context.Context
	ended   chan struct{}
}

func newEnv(t *testing.T, ws transport.Websocket, opts wsconn.Options) *env {
	t.Helper()
	e := &env{
		gql:     testserver.New(),
		started: make(chan context.Context, 64),
		ended:   make(chan struct{}, 64),
	}
	e.gql.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		select {
		case e.started <- ctx:
		default:
		}
		responses := next(ctx)
		return func(ctx context.Context) *graphql.Response {
			r := responses(ctx)
			if r == nil {
				select {
				case e.ended <- struct{}{}:
				default:
				}
			}
			return r
		}
	})
	ws.Implementation = wsconn.New(opts)
	e.gql.AddTransport(wsconn.Transport{Websocket: ws})
	e.srv = httptest.NewServer(wsconn.Middleware(e.gql))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) url() string { return "ws" + strings.TrimPrefix(e.srv.URL, "http") }

// dial opens a websocket offering subprotocols (none when empty).
func (e *env) dial(t *testing.T, header http.Header, subprotocols ...string) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: subprotocols, HandshakeTimeout: waitFor}
	c, resp, err := d.Dial(e.url(), header)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial: %v (status %d)", err, status)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// connect dials with graphql-transport-ws.
func (e *env) connect(t *testing.T) *websocket.Conn {
	t.Helper()
	c := e.dial(t, nil, transportWS)
	if c.Subprotocol() != transportWS {
		t.Fatalf("negotiated %q, want %q", c.Subprotocol(), transportWS)
	}
	return c
}

// connectAcked dials with graphql-transport-ws and completes connection_init.
func (e *env) connectAcked(t *testing.T) *websocket.Conn {
	t.Helper()
	c := e.connect(t)
	sendRaw(t, c, `{"type":"connection_init"}`)
	expect(t, c, "connection_ack", "")
	return c
}

// waitEnded waits until n operations have finished on the server.
func (e *env) waitEnded(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(waitFor)
	for range n {
		select {
		case <-e.ended:
		case <-timeout:
			t.Fatal("timed out waiting for an operation to end")
		}
	}
}

func (e *env) nextStarted(t *testing.T) context.Context {
	t.Helper()
	select {
	case ctx := <-e.started:
		return ctx
	case <-time.After(waitFor):
		t.Fatal("timed out waiting for an operation to start")
		return nil
	}
}

func sendRaw(t *testing.T, c *websocket.Conn, s string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(s)); err != nil {
		if len(s) > 80 {
			s = s[:80] + "…"
		}
		t.Fatalf("send %s: %v", s, err)
	}
}

func subscribe(t *testing.T, c *websocket.Conn, id, payload string) {
	t.Helper()
	sendRaw(t, c, `{"type":"subscribe","id":"`+id+`","payload":`+payload+`}`)
}

// read returns the next message, failing the test if none arrives in time.
func read(t *testing.T, c *websocket.Conn) msg {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(waitFor))
	_, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("waiting for a message: %v", err)
	}
	var m msg
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("message %s: %v", data, err)
	}
	return m
}

// expect reads the next message and checks its type and id.
func expect(t *testing.T, c *websocket.Conn, typ, id string) msg {
	t.Helper()
	m := read(t, c)
	if m.Type != typ || m.ID != id {
		t.Fatalf("got %s %q %s, want %s %q", m.Type, m.ID, m.Payload, typ, id)
	}
	return m
}

// expectClose reads the close frame, which must come next, and checks it.
func expectClose(t *testing.T, c *websocket.Conn, code int, reason string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(waitFor))
	_, data, err := c.ReadMessage()
	if err == nil {
		t.Fatalf("got %s, want close %d %q", data, code, reason)
	}
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want close %d %q", err, code, reason)
	}
	if ce.Code != code || ce.Text != reason {
		t.Fatalf("closed with %d %q, want %d %q", ce.Code, ce.Text, code, reason)
	}
}

func jsonEq(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("payload %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("payload %s, want %s", got, want)
	}
}
