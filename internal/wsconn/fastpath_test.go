package wsconn_test

import (
	"slices"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/scidex/substrate/internal/wsconn"
)

// gqlgen's own message type takes the fast write path; if a gqlgen upgrade
// changes its shape, messages still go out (through encoding/json) but the
// fast path is lost and this test says so.
func TestGQLGenMessagesTakeTheFastPath(t *testing.T) {
	e := newEnv(t, transport.Websocket{}, wsconn.Options{})
	c := e.connectAcked(t)
	subscribe(t, c, "s1", subQuery)
	e.gql.SendNextSubscriptionMessage()
	jsonEq(t, expect(t, c, "next", "s1").Payload, `{"data":{"name":"test"}}`)
	if got := wsconn.FastPathTypes(); !slices.Contains(got, "transport.graphqltransportwsMessage") {
		t.Fatalf("fast path types = %v, want gqlgen's transport.graphqltransportwsMessage", got)
	}
}
