package wsconn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
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
	var buf [8]member
	fields := members(buf[:0], data)

	var m message
	switch raw, ok := fields.get("type"); {
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
	if p, ok := fields.get("payload"); ok && jsonKind(p) != "null" {
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
		var pbuf [8]member
		p := members(pbuf[:0], m.Payload)
		if k := kindOf(p.value("query")); k != "string" {
			return m, fmt.Sprintf("%q message payload expects the 'query' property to be a string, but got %s", m.Type, k)
		}
		for _, f := range []struct{ name, kind string }{
			{"variables", "object"}, {"operationName", "string"}, {"extensions", "object"},
		} {
			if k := kindOf(p.value(f.name)); k != "undefined" && k != "null" && k != f.kind {
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
func parseID(m *message, fields memberList) string {
	raw := fields.value("id")
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

// member is one member of a JSON object: its key, unescaped, and its value as
// written.
type member struct {
	key []byte
	raw json.RawMessage
}

// memberList is an object's members in order; a key given twice means its
// last value, as encoding/json decodes it into a map.
type memberList []member

func (l memberList) get(key string) (json.RawMessage, bool) {
	for i := len(l) - 1; i >= 0; i-- {
		if string(l[i].key) == key {
			return l[i].raw, true
		}
	}
	return nil, false
}

// value is get's value alone: nil for a missing key.
func (l memberList) value(key string) json.RawMessage {
	raw, _ := l.get(key)
	return raw
}

// members appends the members of data, a valid JSON object, to l. It reads
// the object once and allocates only for a key with escapes: a message's
// envelope and payload were decoded into maps, the largest part of what a
// subscription allocated while it was being set up (bench/fanout).
func members(l memberList, data []byte) memberList {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return l
	}
	for i = skipSpace(data, i+1); i < len(data) && data[i] == '"'; {
		end := skipString(data, i)
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) { // as encoding/json reads it
			var k string
			_ = json.Unmarshal(data[i:end], &k)
			key = []byte(k)
		}
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // the colon
		start := i
		i = skipValue(data, i)
		l = append(l, member{key: key, raw: data[start:i]})
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return l
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at data[i].
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index after the valid JSON value that starts at
// data[i].
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = skipString(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}
