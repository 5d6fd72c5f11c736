package wsconn

import (
	"encoding/json"
	"unicode/utf8"
)

// A message is encoded by hand: the session writes one per delivered event,
// and encoding/json's reflection and validation of the payload (JSON already)
// cost a fifth of the server's CPU per message (bench/fanout).

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
