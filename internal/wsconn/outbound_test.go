package wsconn

import (
	"encoding/json"
	"testing"
)

// appendJSON writes a message exactly as encoding/json does.
func TestAppendJSONMatchesJSON(t *testing.T) {
	for _, m := range []message{
		{Type: "next", ID: "1", Payload: json.RawMessage(`{"data":{"events":{"id":"7","ref":"hypothesis:x@sha256:ab"}}}`)},
		{Type: "complete", ID: "42"},
		{Type: "connection_ack"},
		{Type: "ping"},
		{Type: "error", ID: `a"b\c<d>&é` + "\x01", Payload: json.RawMessage(`[{"message":"no"}]`)},
	} {
		if got := string(m.appendJSON(nil)); got != string(m.encode()) {
			t.Errorf("appendJSON = %s, encode = %s", got, m.encode())
		}
	}
}
