package units

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Bounds on accepted numbers. Every conversion within a dimension multiplies
// by less than 1e35 (the widest, s2.pg/L to wk2.kg/uL, is 3.7e32; a test checks
// it), so a value within [minMagnitude, maxMagnitude] converts to every
// unit of its dimension and back without overflow or underflow.
const (
	maxMagnitude = 1e200
	minMagnitude = 1e-200
	// maxLiteral bounds the length of a number's JSON literal: more digits
	// than this carry no information a float64 keeps, and the bound keeps the
	// exact rational small.
	maxLiteral = 100
)

// ParseQuantity reads one quantity, {"value": <number>, "unit": "<UCUM>"},
// from raw (the JSON at path), and checks that its unit measures one of want
// (any whitelisted dimension when want is empty). It refuses, with a Problem
// naming path (or path.value, path.unit):
//   - absent or null raw: required;
//   - a bare number: unit_required; a missing, null or empty unit: unit_required;
//   - anything else that is not such an object, other fields, a value that is
//     not a JSON number: not_a_quantity;
//   - a unit outside the whitelist: unknown_unit, with a Suggestion when a
//     near match measures a wanted dimension;
//   - a known unit of another dimension: incompatible_unit;
//   - a value overflowing float64: not_finite; a non-zero magnitude outside
//     [1e-200, 1e200], or a literal over 100 characters: out_of_range.
//
// The sign is not checked: whether a negative value is meaningful is the
// skill's rule (a negative concentration is refused by pk.nca, with its own
// code).
func ParseQuantity(path string, raw json.RawMessage, want ...Dimension) (Quantity, *Problem) {
	raw = bytes.TrimSpace(raw)
	fields, p := objectFields(path, raw, "quantity", `{"value": 5, "unit": "mg"}`, "value")
	if p != nil {
		return Quantity{}, p
	}
	u, p := parseUnitField(path, fields["unit"], want)
	if p != nil {
		return Quantity{}, p
	}
	v, exact, p := parseNumber(path+".value", fields["value"])
	if p != nil {
		return Quantity{}, p
	}
	return Quantity{Value: v, Unit: u, exact: exact}, nil
}

// objectFields checks raw is an object holding exactly valueKey and unit
// (either may be missing; a missing one is reported by its parser) and
// returns them. shape names the thing for messages; example is its form.
func objectFields(path string, raw json.RawMessage, shape, example, valueKey string) (map[string]json.RawMessage, *Problem) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, newProblem(path, CodeRequired, raw, "a %s is required, as %s", shape, example)
	}
	switch c := raw[0]; {
	case c == '-' || ('0' <= c && c <= '9'):
		return nil, newProblem(path, CodeUnitRequired, raw, "%s is a bare number; a %s needs its unit, as %s", raw, shape, example)
	case c == '[' && valueKey == "values":
		return nil, newProblem(path, CodeUnitRequired, raw, "a bare array; a %s needs its unit, as %s", shape, example)
	case c == '"':
		p := newProblem(path, CodeNotAQuantity, raw, "a string is not a %s; write it as %s", shape, example)
		var s string
		if valueKey == "value" && json.Unmarshal(raw, &s) == nil {
			if num, unit, ok := strings.Cut(strings.TrimSpace(s), " "); ok {
				if _, err := strconv.ParseFloat(num, 64); err == nil {
					if b, err := json.Marshal(map[string]any{"value": json.Number(num), "unit": strings.TrimSpace(unit)}); err == nil {
						p.Suggestion = string(b)
					}
				}
			}
		}
		return nil, p
	case c != '{':
		return nil, newProblem(path, CodeNotAQuantity, raw, "expected a %s, as %s", shape, example)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	bad := func() (map[string]json.RawMessage, *Problem) {
		return nil, newProblem(path, CodeNotAQuantity, raw, "not valid JSON; expected a %s, as %s", shape, example)
	}
	if _, err := dec.Token(); err != nil {
		return bad()
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return bad()
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return bad()
		}
		if key != valueKey && key != "unit" {
			return nil, newProblem(path+"."+key, CodeNotAQuantity, nil,
				"unexpected field %q; a %s has only %q and \"unit\"", key, shape, valueKey)
		}
		if _, dup := fields[key]; dup {
			return nil, newProblem(path+"."+key, CodeNotAQuantity, nil, "field %q appears twice", key)
		}
		fields[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return bad()
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad()
	}
	return fields, nil
}

// parseUnitField reads the unit field (raw is nil when absent) and checks its
// dimension.
func parseUnitField(path string, raw json.RawMessage, want []Dimension) (Unit, *Problem) {
	path += ".unit"
	if len(raw) == 0 || string(raw) == "null" {
		return Unit{}, newProblem(path, CodeUnitRequired, raw, "the unit is missing; expected %s", expected(want))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return Unit{}, newProblem(path, CodeNotAQuantity, raw, "the unit must be a string, a UCUM symbol such as %s", expected(want))
	}
	if s == "" {
		return Unit{}, newProblem(path, CodeUnitRequired, raw, "the unit is empty; expected %s", expected(want))
	}
	return checkUnit(path, s, raw, want)
}

// CheckUnit looks up a unit symbol given on its own (a skill's "output unit"
// option, say) and checks its dimension, with the same refusals as a
// quantity's unit field.
func CheckUnit(path, symbol string, want ...Dimension) (Unit, *Problem) {
	raw, _ := json.Marshal(symbol)
	if symbol == "" {
		return Unit{}, newProblem(path, CodeUnitRequired, raw, "the unit is empty; expected %s", expected(want))
	}
	return checkUnit(path, symbol, raw, want)
}

func checkUnit(path, s string, raw json.RawMessage, want []Dimension) (Unit, *Problem) {
	u, ok := Lookup(s)
	if !ok {
		return Unit{}, unknownUnit(path, s, want)
	}
	if len(want) > 0 && !slices.Contains(want, u.Dimension) {
		return Unit{}, newProblem(path, CodeIncompatibleUnit, raw, "%q is a unit of %s; expected %s",
			s, u.Dimension.describe(), expected(want))
	}
	return u, nil
}

func unknownUnit(path, s string, want []Dimension) *Problem {
	raw, _ := json.Marshal(s)
	p := newProblem(path, CodeUnknownUnit, raw, "%q is not a known UCUM unit (symbols are case-sensitive); expected %s", s, expected(want))
	if sug := suggest(s, want); sug != "" {
		p.Suggestion = sug
		p.Message += "; did you mean " + strconv.Quote(sug) + "?"
	}
	return p
}

// parseNumber reads a JSON number, exactly: the float for the caller and the
// rational of its decimal literal.
func parseNumber(path string, raw json.RawMessage) (float64, *big.Rat, *Problem) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil, newProblem(path, CodeRequired, raw, "the value is missing; expected a number")
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, nil, newProblem(path, CodeNotAQuantity, raw, "the value must be a JSON number, not %s", jsonKind(raw))
	}
	lit := string(raw)
	if len(lit) > maxLiteral {
		return 0, nil, newProblem(path, CodeOutOfRange, nil, "the number has more than %d characters", maxLiteral)
	}
	f, err := strconv.ParseFloat(lit, 64)
	if math.IsInf(f, 0) {
		return 0, nil, newProblem(path, CodeNotFinite, raw, "%s overflows a 64-bit float", lit)
	}
	if err != nil {
		return 0, nil, newProblem(path, CodeNotAQuantity, raw, "%s is not a number", lit)
	}
	if a := math.Abs(f); a > maxMagnitude || (a < minMagnitude && (a != 0 || nonZeroMantissa(lit))) {
		return 0, nil, newProblem(path, CodeOutOfRange, raw, "%s is outside the accepted magnitudes, 0 or 1e-200 to 1e200", lit)
	}
	x, ok := new(big.Rat).SetString(lit)
	if !ok {
		return 0, nil, newProblem(path, CodeNotAQuantity, raw, "%s is not a number", lit)
	}
	return f, x, nil
}

// nonZeroMantissa reports whether a number literal has a non-zero digit
// before its exponent (so a float of 0 means it underflowed).
func nonZeroMantissa(lit string) bool {
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		lit = lit[:i]
	}
	return strings.ContainsAny(lit, "123456789")
}

func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	}
	return "that"
}
