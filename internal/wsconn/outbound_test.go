package wsconn

import (
	"encoding/json"
	"testing"
)

// gqlgenShape has the shape of gqlgen's graphql-transport-ws message.
type gqlgenShape struct {
	Payload json.RawMessage `json:"payload,omitempty"`
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	noOp    bool
}

// The fast path reads and writes a message exactly as the JSON round trip does.
func TestFastPathMatchesJSON(t *testing.T) {
	for _, v := range []gqlgenShape{
		{Type: "next", ID: "1", Payload: json.RawMessage(`{"data":{"events":{"id":"7","ref":"hypothesis:x@sha256:ab"}}}`)},
		{Type: "complete", ID: "42"},
		{Type: "connection_ack"},
		{Type: "ping"},
		{Type: "error", ID: `a"b\c<d>&é` + "\x01", Payload: json.RawMessage(`[{"message":"no"}]`)},
	} {
		m, ok := messageOf(&v)
		if !ok {
			t.Fatalf("%+v: not recognised", v)
		}
		b, _ := json.Marshal(&v)
		var want message
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if m.Type != want.Type || m.ID != want.ID || string(m.Payload) != string(want.Payload) {
			t.Errorf("messageOf = %+v, JSON round trip = %+v", m, want)
		}
		if got := string(m.appendJSON(nil)); got != string(want.encode()) {
			t.Errorf("appendJSON = %s, encode = %s", got, want.encode())
		}
	}
}

// A value of another shape is left to encoding/json.
func TestFastPathRefusesOtherShapes(t *testing.T) {
	type extra struct {
		Payload json.RawMessage `json:"payload,omitempty"`
		ID      string          `json:"id,omitempty"`
		Type    string          `json:"type"`
		More    int
	}
	type renamed struct {
		Payload json.RawMessage `json:"data,omitempty"`
		ID      string          `json:"id,omitempty"`
		Type    string          `json:"type"`
	}
	for _, v := range []any{&extra{Type: "next"}, &renamed{Type: "next"}, gqlgenShape{Type: "next"}, (*gqlgenShape)(nil), map[string]string{"type": "next"}} {
		if _, ok := messageOf(v); ok {
			t.Errorf("%T taken for gqlgen's message", v)
		}
	}
}
