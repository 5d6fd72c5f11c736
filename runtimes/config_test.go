package runtimes_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scidex/substrate/runtimes"
)

type sample struct {
	Function string `json:"function"`
	Limit    *int   `json:"limit,omitempty"`
}

// One strict decode for every runtime: unknown fields and trailing data are
// refused, absent and null are the empty object.
func TestDecodeConfig(t *testing.T) {
	ok := map[string]sample{
		``:                              {},
		`  `:                            {},
		`null`:                          {},
		`{}`:                            {},
		`{"function": "f"}`:             {Function: "f"},
		" {\"function\": \"f\"}\n\t ":   {Function: "f"},
		`{"function": "f", "limit": 3}`: {Function: "f", Limit: ptr(3)},
	}
	for raw, want := range ok {
		got, err := runtimes.DecodeConfig[sample](json.RawMessage(raw))
		if err != nil {
			t.Errorf("%q: %v", raw, err)
			continue
		}
		if got.Function != want.Function || (got.Limit == nil) != (want.Limit == nil) || (got.Limit != nil && *got.Limit != *want.Limit) {
			t.Errorf("%q decoded to %+v, want %+v", raw, got, want)
		}
	}
	bad := map[string]string{
		`{"function": "f", "path": "/bin/sh"}`: `unknown field "path"`,
		`{"function": "f"} {}`:                 "trailing data",
		`{"function": "f"} x`:                  "trailing data",
		`{"function": "f"}}`:                   "trailing data",
		`{"function": "f"} null`:               "trailing data",
		`[1]`:                                  "cannot unmarshal array",
		`"f"`:                                  "cannot unmarshal string",
		`{"limit": "3"}`:                       "cannot unmarshal string",
		`{"function": `:                        "unexpected EOF",
	}
	for raw, want := range bad {
		got, err := runtimes.DecodeConfig[sample](json.RawMessage(raw))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %+v, %v; want an error saying %q", raw, got, err, want)
		}
		if got.Function != "" {
			t.Errorf("%q: a refused config still decoded to %+v", raw, got)
		}
	}
}

func ptr[T any](v T) *T { return &v }
