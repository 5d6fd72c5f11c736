package model

import (
	"encoding/json"
	"fmt"
	"io"
)

// JSON is the JSON scalar: any JSON value, kept as its encoding.
type JSON json.RawMessage

// MarshalGQL writes the value as is (null when empty).
func (j JSON) MarshalGQL(w io.Writer) {
	if len(j) == 0 {
		_, _ = io.WriteString(w, "null")
		return
	}
	_, _ = w.Write(j)
}

// UnmarshalGQL accepts any input value and keeps its JSON encoding.
func (j *JSON) UnmarshalGQL(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("JSON scalar: %w", err)
	}
	*j = b
	return nil
}

// MarshalJSON lets JSON values nest inside other encodings.
func (j JSON) MarshalJSON() ([]byte, error) {
	if len(j) == 0 {
		return []byte("null"), nil
	}
	return j, nil
}
