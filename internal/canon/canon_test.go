package canon

import (
	"encoding/json"
	"strings"
	"testing"
)

func hashOf(t *testing.T, title, content string, state *string) string {
	t.Helper()
	h, err := Hash(Fields{Title: title, Content: json.RawMessage(content), LifecycleState: state})
	if err != nil {
		t.Fatalf("Hash: %v", err)
	}
	return h
}

func TestHashIgnoresKeyOrderAndNumberSpelling(t *testing.T) {
	base := hashOf(t, "T", `{"a":1,"b":{"x":[1,2],"y":"é"},"c":100}`, nil)
	if !strings.HasPrefix(base, "sha256:") || len(base) != len("sha256:")+64 {
		t.Fatalf("hash %q is not sha256:<64 hex>", base)
	}
	same := []string{
		`{"c":100,"b":{"y":"é","x":[1,2]},"a":1}`,
		`{ "a" : 1.0, "b" : { "x" : [ 1e0, 2.00 ] , "y":"\u00e9" }, "c": 1E2 }`,
		"{\n\t\"b\": {\"y\": \"é\", \"x\": [1, 2]},\n\t\"a\": 1, \"c\": 100.000}",
	}
	for _, c := range same {
		if got := hashOf(t, "T", c, nil); got != base {
			t.Errorf("hash of %s = %s, want %s", c, got, base)
		}
	}
}

func TestHashChangesWithAnyValue(t *testing.T) {
	state := "proposed"
	other := "archived"
	base := hashOf(t, "T", `{"a":1,"b":[1,2]}`, &state)
	variants := []struct {
		name, title, content string
		state                *string
	}{
		{"number", "T", `{"a":2,"b":[1,2]}`, &state},
		{"array order", "T", `{"a":1,"b":[2,1]}`, &state},
		{"type", "T", `{"a":"1","b":[1,2]}`, &state},
		{"extra key", "T", `{"a":1,"b":[1,2],"c":null}`, &state},
		{"title", "T ", `{"a":1,"b":[1,2]}`, &state},
		{"lifecycle", "T", `{"a":1,"b":[1,2]}`, &other},
		{"no lifecycle", "T", `{"a":1,"b":[1,2]}`, nil},
	}
	for _, v := range variants {
		if got := hashOf(t, v.title, v.content, v.state); got == base {
			t.Errorf("%s: hash unchanged (%s)", v.name, got)
		}
	}
}

func TestHashRejectsInvalidJSON(t *testing.T) {
	if _, err := HashJSON([]byte(`{"a":`)); err == nil {
		t.Fatal("HashJSON accepted truncated JSON")
	}
}
