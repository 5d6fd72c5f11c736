package wsconn

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The graphql-transport-ws subprotocol and its message types.
const (
	subprotocolTransportWS = "graphql-transport-ws"

	msgConnectionInit = "connection_init"
	msgConnectionAck  = "connection_ack"
	msgPing           = "ping"
	msgPong           = "pong"
	msgSubscribe      = "subscribe"
	msgNext           = "next"
	msgError          = "error"
	msgComplete       = "complete"
)

// message is one graphql-transport-ws message. Payload is nil when the
// message has none or it is null.
type message struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func (m message) encode() []byte {
	b, err := json.Marshal(m)
	if err != nil { // Payload is valid JSON: it was decoded or marshalled before
		panic(err)
	}
	return b
}

// parseClientMessage decodes and validates a message from the client as the
// protocol's reference implementation does (graphql-ws validateMessage). It
// returns the reason for a 4400 close when the message is invalid. Keys are
// matched case-sensitively, unlike encoding/json's struct decoding.
func parseClientMessage(data []byte) (message, string) {
	if !json.Valid(data) {
		return message{}, "Invalid message received"
	}
	if k := jsonKind(data); k != "object" {
		return message{}, "Message is expected to be an object, but got " + k
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return message{}, "Invalid message received"
	}

	var m message
	switch raw, ok := fields["type"]; {
	case !ok || jsonKind(raw) == "null":
		return m, "Message is missing the 'type' property"
	case jsonKind(raw) != "string":
		return m, "Message expects the 'type' property to be a string, but got " + jsonKind(raw)
	default:
		_ = json.Unmarshal(raw, &m.Type)
		if m.Type == "" {
			return m, "Message is missing the 'type' property"
		}
	}
	if p, ok := fields["payload"]; ok && jsonKind(p) != "null" {
		m.Payload = p
	}

	switch m.Type {
	case msgConnectionInit, msgPing, msgPong:
		if m.Payload != nil && jsonKind(m.Payload) != "object" {
			return m, fmt.Sprintf("%q message expects the 'payload' property to be an object or nullish or missing, but got %s", m.Type, jsonKind(m.Payload))
		}
	case msgSubscribe:
		if reason := parseID(&m, fields); reason != "" {
			return m, reason
		}
		if k := kindOf(m.Payload); k != "object" {
			return m, fmt.Sprintf("%q message expects the 'payload' property to be an object, but got %s", m.Type, k)
		}
		var p map[string]json.RawMessage
		_ = json.Unmarshal(m.Payload, &p)
		if k := kindOf(p["query"]); k != "string" {
			return m, fmt.Sprintf("%q message payload expects the 'query' property to be a string, but got %s", m.Type, k)
		}
		for _, f := range []struct{ name, kind string }{
			{"variables", "object"}, {"operationName", "string"}, {"extensions", "object"},
		} {
			if k := kindOf(p[f.name]); k != "undefined" && k != "null" && k != f.kind {
				return m, fmt.Sprintf("%q message payload expects the '%s' property to be a %s or nullish or missing, but got %s", m.Type, f.name, f.kind, k)
			}
		}
	case msgComplete:
		if reason := parseID(&m, fields); reason != "" {
			return m, reason
		}
	case msgConnectionAck, msgNext, msgError:
		return m, fmt.Sprintf("Unexpected message of type %q received", m.Type)
	default:
		return m, fmt.Sprintf("Invalid message 'type' property %q", m.Type)
	}
	return m, ""
}

// parseID sets m.ID from the required, non-empty string "id".
func parseID(m *message, fields map[string]json.RawMessage) string {
	raw := fields["id"]
	if k := kindOf(raw); k != "string" {
		return fmt.Sprintf("%q message expects the 'id' property to be a string, but got %s", m.Type, k)
	}
	_ = json.Unmarshal(raw, &m.ID)
	if m.ID == "" {
		return fmt.Sprintf("%q message requires a non-empty 'id' property", m.Type)
	}
	return ""
}

// kindOf is jsonKind, with "undefined" for a missing value.
func kindOf(raw json.RawMessage) string {
	if raw == nil {
		return "undefined"
	}
	return jsonKind(raw)
}

// jsonKind names the kind of a valid JSON value as graphql-ws's extendedTypeof
// does: object, array, string, number, boolean or null.
func jsonKind(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "undefined"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
