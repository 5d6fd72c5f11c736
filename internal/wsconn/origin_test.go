package wsconn_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"

	"github.com/scidex/substrate/internal/wsconn"
)

func TestOrigin(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{
		AllowedOrigins: []string{"https://app.scidex.example/"},
	})
	host := strings.TrimPrefix(e.srv.URL, "http://")

	for _, origin := range []string{"", "http://" + host, "https://" + host, "https://app.scidex.example", "HTTPS://App.SciDEX.example"} {
		t.Run("allowed "+origin, func(t *testing.T) {
			header := http.Header{}
			if origin != "" {
				header.Set("Origin", origin)
			}
			c := e.dial(t, header, transportWS)
			sendRaw(t, c, `{"type":"connection_init"}`)
			expect(t, c, "connection_ack", "")
		})
	}

	for _, origin := range []string{"https://evil.example", "https://app.scidex.example:8443", "null", "http://" + host + ".evil.example"} {
		t.Run("refused "+origin, func(t *testing.T) {
			header := http.Header{"Origin": {origin}}
			d := websocket.Dialer{Subprotocols: []string{transportWS}}
			c, resp, err := d.Dial(e.url(), header)
			if err == nil {
				_ = c.Close()
				t.Fatal("upgrade succeeded")
			}
			if !errors.Is(err, websocket.ErrBadHandshake) || resp == nil {
				t.Fatalf("dial: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusForbidden || string(body) != "Forbidden\n" {
				t.Fatalf("got %d %q, want 403 \"Forbidden\\n\"", resp.StatusCode, body)
			}
		})
	}
}

func TestPrefersTransportWS(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{})
	c := e.dial(t, nil, legacyWS, transportWS)
	if c.Subprotocol() != transportWS {
		t.Fatalf("negotiated %q", c.Subprotocol())
	}
}

func TestLegacyGraphQLWS(t *testing.T) {
	for _, offered := range [][]string{{legacyWS}, nil} {
		t.Run(strings.Join(offered, ",")+" offered", func(t *testing.T) {
			e := newEnv(t, transport.Websocket{}, wsconn.Options{MaxSubscriptions: 1})
			c := e.dial(t, nil, offered...)

			sendRaw(t, c, `{"type":"connection_init"}`)
			expect(t, c, "connection_ack", "")
			expect(t, c, "ka", "")

			sendRaw(t, c, `{"type":"start","id":"1","payload":`+subQuery+`}`)
			e.gql.SendNextSubscriptionMessage()
			jsonEq(t, expect(t, c, "data", "1").Payload, `{"data":{"name":"test"}}`)

			// gqlgen's own behaviour: complete after stop.
			sendRaw(t, c, `{"type":"stop","id":"1"}`)
			expect(t, c, "complete", "1")

			// The cap (1): a second operation while one runs is refused
			// with an error and a complete; once the first ends the next runs.
			sendRaw(t, c, `{"type":"start","id":"2","payload":`+subQuery+`}`)
			sendRaw(t, c, `{"type":"start","id":"3","payload":{"query":"{ name }"}}`)
			jsonEq(t, expect(t, c, "error", "3").Payload, `[{"message":"too many subscriptions on this connection (max 1)"}]`)
			expect(t, c, "complete", "3")
			sendRaw(t, c, `{"type":"stop","id":"2"}`)
			expect(t, c, "complete", "2")
			sendRaw(t, c, `{"type":"start","id":"4","payload":{"query":"{ name }"}}`)
			expect(t, c, "data", "4")
			expect(t, c, "complete", "4")
			sendRaw(t, c, `{"type":"connection_terminate"}`)
			expectClose(t, c, 1000, "terminated")
		})
	}
}
