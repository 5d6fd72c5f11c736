package jsonlogic

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// specCase is a rule, the data it is applied to, and the result it must give,
// all as JSON.
type specCase struct {
	rule, data, want string
}

// decode decodes JSON, with numbers as float64 or, if useNumber, json.Number.
func decode(t testing.TB, s string, useNumber bool) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	if useNumber {
		dec.UseNumber()
	}
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return v
}

// canonical is v as plain decoded JSON (json.Number becomes float64), for comparison.
func canonical(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshalling %#v: %v", v, err)
	}
	return decode(t, string(b), false)
}

func mustCompile(t testing.TB, rule string) *Filter {
	t.Helper()
	f, err := Compile(json.RawMessage(rule))
	if err != nil {
		t.Fatalf("Compile(%s): %v", rule, err)
	}
	return f
}

// runSpec checks each case's Eval result, with the data's numbers decoded both
// as float64 and as json.Number, and that Match agrees with the result's truthiness.
func runSpec(t *testing.T, cases []specCase) {
	t.Helper()
	for _, c := range cases {
		f := mustCompile(t, c.rule)
		want := decode(t, c.want, false)
		data := "null"
		if c.data != "" {
			data = c.data
		}
		for _, useNumber := range []bool{false, true} {
			d := decode(t, data, useNumber)
			got := f.Eval(d)
			if !reflect.DeepEqual(canonical(t, got), want) {
				t.Errorf("%s on %s (json.Number %v) = %#v, want %s", c.rule, data, useNumber, got, c.want)
			}
			if m := f.Match(d); m != truthy(got) {
				t.Errorf("%s on %s: Match = %v but the result %#v has truthiness %v", c.rule, data, m, got, !m)
			}
		}
	}
}
