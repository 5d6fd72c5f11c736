package runtimes

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// DecodeConfig decodes a tool's runtime_config into T, strictly, the same way
// for every runtime: a field T does not have is refused, and so is anything
// after the one JSON value; an absent, empty or null runtime_config is the
// empty object (T's zero value), for the runtime's own checks to refuse what
// it requires. The error is the decoder's own (naming the unknown field or
// the bad value) or says there is trailing data; the caller wraps it in a
// Problem at runtime_config that shows the shape it expects.
func DecodeConfig[T any](raw json.RawMessage) (T, error) {
	var v T
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return v, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		var zero T
		return zero, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var zero T
		return zero, errors.New("trailing data after the runtime_config object")
	}
	return v, nil
}
