package wsconn

import (
	"encoding/json"
	"reflect"
	"sync"
	"unicode/utf8"
)

// gqlgen hands WriteJSON a pointer to its own graphql-transport-ws message
// struct: Payload json.RawMessage `json:"payload,omitempty"`, ID string
// `json:"id,omitempty"`, Type (a string type) `json:"type"`. Marshalling it,
// unmarshalling the result for the guard and marshalling that again cost
// about a fifth of the server's CPU per delivered subscription event
// (bench/fanout), so the guard reads the three fields directly and the message
// is encoded once. A value of any other shape takes the JSON round trip.

// layout is where the three fields are in a gqlgen message struct.
type layout struct {
	payload, id, typ int
}

// layouts caches, per reflect.Type, a *layout, or nil when the type does not
// have gqlgen's shape.
var layouts sync.Map

// messageOf reads the message v holds when v is a pointer to a struct of
// gqlgen's shape.
func messageOf(v any) (message, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return message{}, false
	}
	rv = rv.Elem()
	l := layoutOf(rv.Type())
	if l == nil {
		return message{}, false
	}
	m := message{Type: rv.Field(l.typ).String(), ID: rv.Field(l.id).String()}
	if p := rv.Field(l.payload).Bytes(); len(p) > 0 {
		m.Payload = p
	}
	return m, true
}

func layoutOf(t reflect.Type) *layout {
	if l, ok := layouts.Load(t); ok {
		return l.(*layout)
	}
	l := &layout{payload: -1, id: -1, typ: -1}
	unknown := false
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue // not marshalled
		}
		switch {
		case f.Name == "Payload" && f.Type == reflect.TypeFor[json.RawMessage]() && f.Tag.Get("json") == "payload,omitempty":
			l.payload = i
		case f.Name == "ID" && f.Type.Kind() == reflect.String && f.Tag.Get("json") == "id,omitempty":
			l.id = i
		case f.Name == "Type" && f.Type.Kind() == reflect.String && f.Tag.Get("json") == "type":
			l.typ = i
		default:
			unknown = true // json.Marshal would write it; the fast path would not
		}
	}
	if unknown || l.payload < 0 || l.id < 0 || l.typ < 0 {
		l = nil
	}
	layouts.Store(t, l)
	return l
}

// appendJSON appends m as json.Marshal would encode it. The payload is copied
// as it is: gqlgen builds every payload with json.Marshal, so it is valid,
// compact JSON already.
func (m message) appendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, m.Type)
	if m.ID != "" {
		b = append(b, `,"id":`...)
		b = appendString(b, m.ID)
	}
	if len(m.Payload) > 0 {
		b = append(b, `,"payload":`...)
		b = append(b, m.Payload...)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string. Plain ASCII (the message types,
// and the ids clients use) is copied; anything else goes through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
