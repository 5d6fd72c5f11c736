package secrets

import (
	"fmt"
	"log/slog"
)

// redacted is what a Value prints as, wherever it is printed.
const redacted = "[redacted]"

// Value is a secret's value. Printing it, logging it or marshalling it to
// JSON shows "[redacted]": a Value that slips into a log line, an error or a
// Details map leaks nothing. Reveal is the one way to the bytes.
type Value struct {
	v string
}

// Reveal returns the secret itself. Call it where the secret goes on the
// wire, and nowhere else.
func (v Value) Reveal() string { return v.v }

// String implements fmt.Stringer with the redacted form.
func (v Value) String() string { return redacted }

// GoString implements fmt.GoStringer (%#v) with the redacted form.
func (v Value) GoString() string { return redacted }

// Format implements fmt.Formatter, so that every verb (%s, %v, %q, %x, %+v)
// prints the redacted form.
func (v Value) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalJSON implements json.Marshaler with the redacted form.
func (v Value) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// LogValue implements slog.LogValuer with the redacted form.
func (v Value) LogValue() slog.Value { return slog.StringValue(redacted) }
