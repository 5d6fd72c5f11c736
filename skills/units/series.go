package units

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strconv"
)

// Series is a list of numbers sharing one unit, as a concentration-time
// profile's times or concentrations are given: {"values": [0, 0.5, 1], "unit":
// "h"}. Like a Quantity it keeps each value's exact rational.
type Series struct {
	Values []float64
	Unit   Unit
	exact  []*big.Rat
}

// ParseSeries reads {"values": [<number>, ...], "unit": "<UCUM>"} at path and
// checks the unit as ParseQuantity does. It reports every bad element, each
// at path.values[i], so a client sees them all; the unit's problem, if any,
// comes first. A bare array is unit_required; an empty list is accepted (the
// skill decides how many values it needs).
func ParseSeries(path string, raw json.RawMessage, want ...Dimension) (Series, Problems) {
	raw = bytes.TrimSpace(raw)
	fields, p := objectFields(path, raw, "series", `{"values": [0, 0.5, 1], "unit": "h"}`, "values")
	if p != nil {
		return Series{}, Problems{*p}
	}
	var ps Problems
	u, p := parseUnitField(path, fields["unit"], want)
	ps.Add(p)
	vp := path + ".values"
	vraw := bytes.TrimSpace(fields["values"])
	if len(vraw) == 0 || string(vraw) == "null" {
		ps.Add(newProblem(vp, CodeRequired, vraw, "the values are missing; expected an array of numbers"))
		return Series{}, ps
	}
	var elems []json.RawMessage
	if vraw[0] != '[' || json.Unmarshal(vraw, &elems) != nil {
		ps.Add(newProblem(vp, CodeNotAQuantity, vraw, "the values must be an array of numbers"))
		return Series{}, ps
	}
	s := Series{Values: make([]float64, len(elems)), Unit: u, exact: make([]*big.Rat, len(elems))}
	for i, e := range elems {
		f, x, p := parseNumber(vp+"["+strconv.Itoa(i)+"]", bytes.TrimSpace(e))
		ps.Add(p)
		s.Values[i], s.exact[i] = f, x
	}
	if len(ps) > 0 {
		return Series{}, ps
	}
	return s, nil
}

// Len returns the number of values.
func (s Series) Len() int { return len(s.Values) }

// At returns the i'th value as a Quantity, with its exact rational.
func (s Series) At(i int) Quantity {
	q := Quantity{Value: s.Values[i], Unit: s.Unit}
	if i < len(s.exact) {
		q.exact = s.exact[i]
	}
	return q
}

// In returns every value converted exactly to the unit spelled to, each
// rounded once.
func (s Series) In(to string) ([]float64, error) {
	out := make([]float64, len(s.Values))
	for i := range s.Values {
		v, err := s.At(i).In(to)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	if len(s.Values) == 0 {
		if _, err := (Quantity{Unit: s.Unit}).In(to); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Canonical returns every value in the dimension's canonical unit.
func (s Series) Canonical() []float64 {
	out, err := s.In(canonical[s.Unit.Dimension])
	if err != nil {
		panic("units: canonical values of a series: " + err.Error())
	}
	return out
}
