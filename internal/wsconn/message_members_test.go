package wsconn

import (
	"bytes"
	"encoding/json"
	"testing"
)

// members reads an object as encoding/json decodes it into a map: the same
// keys (escapes undone, the last of a repeated key), the same raw values.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"type":"subscribe","id":"1","payload":{"query":"{ a }"}}`,
		`{ "type" : "ping" , "payload" : null }`,
		`{"ty\u0070e":"ping","type":"pong"}`,
		`{"a":"}\"{","b":[1,{"c":"]"}],"c":-1.5e3,"d":true,"e":null}`,
		"{\n\t\"payload\":\r\n{\"x\":\"\\\\\"}}",
		`{"id":"a","id":"b"}`,
		`{"":1,"\"":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want map[string]json.RawMessage
		if !json.Valid(data) || json.Unmarshal(data, &want) != nil {
			return
		}
		got := members(nil, data)
		keys := map[string]bool{}
		for _, m := range got {
			keys[string(m.key)] = true
		}
		if len(keys) != len(want) {
			t.Fatalf("%q: keys %v, want %v", data, keys, want)
		}
		for k, raw := range want {
			v, ok := got.get(k)
			if !ok || !bytes.Equal(bytes.TrimSpace(v), bytes.TrimSpace(raw)) {
				t.Errorf("%q: %q = %q, want %q", data, k, v, raw)
			}
		}
	})
}
