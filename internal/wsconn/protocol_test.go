package wsconn_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/scidex/substrate/internal/wsconn"
)

func TestSubscribeNextComplete(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{})
	c := e.connectAcked(t)

	subscribe(t, c, "s1", subQuery)
	e.gql.SendNextSubscriptionMessage()
	jsonEq(t, expect(t, c, "next", "s1").Payload, `{"data":{"name":"test"}}`)
	e.gql.SendNextSubscriptionMessage()
	jsonEq(t, expect(t, c, "next", "s1").Payload, `{"data":{"name":"test"}}`)
	e.gql.SendCompleteSubscriptionMessage()
	expect(t, c, "complete", "s1")

	// The id is free again once the server completed it.
	subscribe(t, c, "s1", subQuery)
	e.gql.SendNextSubscriptionMessage()
	expect(t, c, "next", "s1")

	// A single-result operation over the socket: next, then complete.
	subscribe(t, c, "q1", `{"query":"{ name }"}`)
	jsonEq(t, expect(t, c, "next", "q1").Payload, `{"data":{"name":"test"}}`)
	expect(t, c, "complete", "q1")
}

func TestClientCompleteSendsNothingMoreAndFreesID(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{})
	c := e.connectAcked(t)

	subscribe(t, c, "a", subQuery)
	e.gql.SendNextSubscriptionMessage()
	expect(t, c, "next", "a")

	sendRaw(t, c, `{"type":"complete","id":"a"}`)
	e.waitEnded(t, 1)
	// gqlgen writes a complete for "a" now or soon; it must not reach the
	// client, nor be mistaken for the end of the new "a".
	subscribe(t, c, "a", subQuery)
	e.gql.SendNextSubscriptionMessage()
	expect(t, c, "next", "a")

	// Complete for an unknown id is ignored; the connection stays usable.
	sendRaw(t, c, `{"type":"complete","id":"nope"}`)
	sendRaw(t, c, `{"type":"ping"}`)
	expect(t, c, "pong", "")
}

func TestErrorIsNotFollowedByComplete(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{})
	c := e.connectAcked(t)

	subscribe(t, c, "bad", `{"query":"!"}`)
	m := expect(t, c, "error", "bad")
	if !strings.Contains(string(m.Payload), "Unexpected !") {
		t.Fatalf("error payload %s", m.Payload)
	}
	// gqlgen wrote complete right after the error, before it read this ping.
	sendRaw(t, c, `{"type":"ping"}`)
	expect(t, c, "pong", "")

	// The id is free after the error.
	subscribe(t, c, "bad", subQuery)
	e.gql.SendNextSubscriptionMessage()
	expect(t, c, "next", "bad")
}

func TestPingPong(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{})
	c := e.connect(t)

	// Before connection_init: answered, payload echoed; a pong is ignored.
	sendRaw(t, c, `{"type":"ping","payload":{"n":1}}`)
	jsonEq(t, expect(t, c, "pong", "").Payload, `{"n":1}`)
	sendRaw(t, c, `{"type":"pong"}`)
	sendRaw(t, c, `{"type":"connection_init","payload":{"Authorization":"x"}}`)
	expect(t, c, "connection_ack", "")

	// After it, gqlgen answers.
	sendRaw(t, c, `{"type":"ping","payload":null}`)
	if m := expect(t, c, "pong", ""); m.Payload != nil {
		t.Fatalf("pong payload %s, want none", m.Payload)
	}
	sendRaw(t, c, `{"type":"pong","payload":{"unsolicited":true}}`)
	sendRaw(t, c, `{"type":"ping","payload":{"n":2}}`)
	jsonEq(t, expect(t, c, "pong", "").Payload, `{"n":2}`)
}

// pingers are the two ways the server pings: gqlgen's goroutine
// (PingPongInterval) and wsconn's timer (Options.PingInterval).
var pingers = []struct {
	name string
	ws   transport.Websocket
	opts wsconn.Options
}{
	{"gqlgen", transport.Websocket{PingPongInterval: 20 * time.Millisecond}, wsconn.Options{}},
	{"timer", transport.Websocket{}, wsconn.Options{PingInterval: 20 * time.Millisecond}},
}

func TestServerPings(t *testing.T) {
	for _, p := range pingers {
		t.Run(p.name, func(t *testing.T) {
			e := newEnv(t, p.ws, p.opts)
			c := e.connectAcked(t)
			expect(t, c, "ping", "")
			sendRaw(t, c, `{"type":"pong"}`)
			expect(t, c, "ping", "")
			sendRaw(t, c, `{"type":"pong"}`)
			// Still open, and still answering: the pongs kept it alive.
			subscribe(t, c, "s1", `{"query":"{ name }"}`)
			for {
				m := read(t, c)
				if m.Type == "ping" {
					sendRaw(t, c, `{"type":"pong"}`)
					continue
				}
				if m.Type != "next" || m.ID != "s1" {
					t.Fatalf("got %s %q, want next s1", m.Type, m.ID)
				}
				break
			}
		})
	}
}

func TestCloseCodes(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name   string
		init   bool
		send   []string
		code   int
		reason string
	}{
		{"not JSON", false, []string{`hello`}, 4400, "Invalid message received"},
		{"not JSON after init", true, []string{`{"type":`}, 4400, "Invalid message received"},
		{"not an object", true, []string{`[]`}, 4400, "Message is expected to be an object, but got array"},
		{"no type", false, []string{`{"id":"1"}`}, 4400, "Message is missing the 'type' property"},
		{"type not a string", false, []string{`{"type":1}`}, 4400, "Message expects the 'type' property to be a string, but got number"},
		{"type is case-sensitive", false, []string{`{"Type":"ping"}`}, 4400, "Message is missing the 'type' property"},
		{"unknown type", false, []string{`{"type":"nuxt"}`}, 4400, `Invalid message 'type' property "nuxt"`},
		{"unknown type after init", true, []string{`{"type":"start","id":"1","payload":{}}`}, 4400, `Invalid message 'type' property "start"`},
		{"server-only type", true, []string{`{"type":"next","id":"1","payload":{}}`}, 4400, `Unexpected message of type "next" received`},
		{"init payload not an object", false, []string{`{"type":"connection_init","payload":"x"}`}, 4400,
			`"connection_init" message expects the 'payload' property to be an object or nullish or missing, but got string`},
		{"subscribe without id", true, []string{`{"type":"subscribe","payload":` + subQuery + `}`}, 4400,
			`"subscribe" message expects the 'id' property to be a string, but got undefined`},
		{"subscribe with empty id", true, []string{`{"type":"subscribe","id":"","payload":` + subQuery + `}`}, 4400,
			`"subscribe" message requires a non-empty 'id' property`},
		{"subscribe without payload", true, []string{`{"type":"subscribe","id":"1"}`}, 4400,
			`"subscribe" message expects the 'payload' property to be an object, but got undefined`},
		{"subscribe without query", true, []string{`{"type":"subscribe","id":"1","payload":{}}`}, 4400,
			`"subscribe" message payload expects the 'query' property to be a string, but got undefined`},
		{"subscribe with bad variables", true, []string{`{"type":"subscribe","id":"1","payload":{"query":"{ name }","variables":[]}}`}, 4400,
			`"subscribe" message payload expects the 'variables' property to be a object or nullish or missing, but got array`},
		{"complete without id", true, []string{`{"type":"complete"}`}, 4400,
			`"complete" message expects the 'id' property to be a string, but got undefined`},
		{"subscribe before ack", false, []string{`{"type":"subscribe","id":"1","payload":` + subQuery + `}`}, 4401, "Unauthorized"},
		{"second connection_init", true, []string{`{"type":"connection_init"}`}, 4429, "Too many initialisation requests"},
		{"active id", true, []string{
			`{"type":"subscribe","id":"1","payload":` + subQuery + `}`,
			`{"type":"subscribe","id":"1","payload":{"query":"{ name }"}}`,
		}, 4409, "Subscriber for 1 already exists"},
		{"long active id", true, []string{
			`{"type":"subscribe","id":"` + long + `","payload":` + subQuery + `}`,
			`{"type":"subscribe","id":"` + long + `","payload":` + subQuery + `}`,
		}, 4409, "Subscriber for " + long[:123-len("Subscriber for ")-len(" already exists")-len("…")] + "… already exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, transport.Websocket{}, wsconn.Options{})
			c := e.connect(t)
			if tt.init {
				sendRaw(t, c, `{"type":"connection_init"}`)
				expect(t, c, "connection_ack", "")
			}
			for _, s := range tt.send {
				sendRaw(t, c, s)
			}
			expectClose(t, c, tt.code, tt.reason)
		})
	}
}

func TestInitFuncRefuses(t *testing.T) {
	tests := []struct {
		name   string
		init   func(ctx context.Context) context.Context
		code   int
		reason string
	}{
		{"plain error", func(ctx context.Context) context.Context { return ctx }, 4403, "Forbidden"},
		{"code and reason from the InitFunc", func(ctx context.Context) context.Context {
			return wsconn.Refuse(ctx, 4403, "Forbidden: token revoked")
		}, 4403, "Forbidden: token revoked"},
		{"other code", func(ctx context.Context) context.Context {
			return wsconn.Refuse(ctx, 4401, "")
		}, 4401, "Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, transport.Websocket{
				InitFunc: func(ctx context.Context, _ transport.InitPayload) (context.Context, *transport.InitPayload, error) {
					return tt.init(ctx), nil, errors.New("bad token")
				},
			}, wsconn.Options{})
			c := e.connect(t)
			sendRaw(t, c, `{"type":"connection_init","payload":{"Authorization":"Bearer nope"}}`)
			expectClose(t, c, tt.code, tt.reason)
		})
	}
}

func TestInitTimeout(t *testing.T) {
	e := newEnv(t, transport.Websocket{InitTimeout: 30 * time.Millisecond}, wsconn.Options{})
	c := e.connect(t)
	// Pings are answered while the server waits, and do not count as init.
	sendRaw(t, c, `{"type":"ping"}`)
	expect(t, c, "pong", "")
	expectClose(t, c, 4408, "Connection initialisation timeout")
}

func TestInitWithinTimeout(t *testing.T) {
	e := newEnv(t, transport.Websocket{InitTimeout: time.Minute}, wsconn.Options{})
	c := e.connectAcked(t)
	subscribe(t, c, "1", subQuery)
	e.gql.SendNextSubscriptionMessage()
	expect(t, c, "next", "1")
}

func TestMaxSubscriptions(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{MaxSubscriptions: 2})
	c := e.connectAcked(t)

	subscribe(t, c, "a", subQuery)
	subscribe(t, c, "b", subQuery)
	subscribe(t, c, "c", subQuery)
	jsonEq(t, expect(t, c, "error", "c").Payload, `[{"message":"too many subscriptions on this connection (max 2)"}]`)

	// The connection stays open and the others run.
	e.gql.SendNextSubscriptionMessage()
	if m := read(t, c); m.Type != "next" || (m.ID != "a" && m.ID != "b") {
		t.Fatalf("got %s %q, want next for a or b", m.Type, m.ID)
	}

	// Completing one makes room; "c" is then active, as a second subscribe
	// with its id shows.
	sendRaw(t, c, `{"type":"complete","id":"a"}`)
	subscribe(t, c, "c", subQuery)
	subscribe(t, c, "c", subQuery)
	expectClose(t, c, 4409, "Subscriber for c already exists")
}

// TooManyFunc builds the cap's error, from the upgrade request's context, on
// both subprotocols.
func TestMaxSubscriptionsError(t *testing.T) {
	opts := wsconn.Options{MaxSubscriptions: 1, TooManyFunc: func(ctx context.Context, max int) *gqlerror.Error {
		_, upgrade := ctx.Value(http.ServerContextKey).(*http.Server)
		return &gqlerror.Error{Message: fmt.Sprintf("cap %d", max), Extensions: map[string]any{"code": "LIMIT", "upgrade": upgrade}}
	}}
	for _, proto := range []string{transportWS, legacyWS} {
		t.Run(proto, func(t *testing.T) {
			e := newEnv(t, transport.Websocket{}, opts)
			c := e.dial(t, nil, proto)
			sendRaw(t, c, `{"type":"connection_init"}`)
			expect(t, c, "connection_ack", "")
			start := `{"type":"subscribe","id":"%s","payload":` + subQuery + `}`
			if proto == legacyWS {
				expect(t, c, "ka", "")
				start = `{"type":"start","id":"%s","payload":` + subQuery + `}`
			}
			sendRaw(t, c, fmt.Sprintf(start, "a"))
			sendRaw(t, c, fmt.Sprintf(start, "b"))
			jsonEq(t, expect(t, c, "error", "b").Payload, `[{"message":"cap 1","extensions":{"code":"LIMIT","upgrade":true}}]`)
		})
	}
}

func TestManySubscriptions(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{})
	c := e.connectAcked(t)

	ids := []string{"1", "2", "3", "4", "5"}
	for _, id := range ids {
		subscribe(t, c, id, subQuery)
	}
	const n = 20
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			e.gql.SendNextSubscriptionMessage()
		}
	}()
	for range n {
		m := read(t, c)
		if m.Type != "next" || !slices.Contains(ids, m.ID) {
			t.Fatalf("got %s %q", m.Type, m.ID)
		}
	}
	<-done

	for _, id := range ids {
		sendRaw(t, c, `{"type":"complete","id":"`+id+`"}`)
	}
	e.waitEnded(t, len(ids))
	// Nothing about the completed operations reaches the client.
	sendRaw(t, c, `{"type":"ping"}`)
	expect(t, c, "pong", "")
}

func TestReadLimit(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{ReadLimit: 256})
	for _, size := range []int{512, 8 << 20} {
		c := e.connectAcked(t)
		// The server stops reading at the limit but keeps the TCP connection
		// open until the client is done, so the whole message is sent and the
		// close frame is not lost to a reset.
		subscribe(t, c, "1", `{"query":"{ name }","extensions":{"pad":"`+strings.Repeat("x", size)+`"}}`)
		expectClose(t, c, 1009, "")
	}
}
