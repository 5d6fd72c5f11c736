package units

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// Quantity is a number with a whitelisted unit. Value is the float a skill
// reads; alongside it the Quantity keeps the exact rational it was parsed
// from (the decimal literal of the JSON, so 0.1 is 1/10) and conversions
// work on that rational, rounding to float64 once, at the end.
//
// A Quantity built as a struct literal (or whose Value a caller changed) has
// no matching rational; it then converts from the exact binary value of
// Value, which is as exact as a float allows.
type Quantity struct {
	Value float64
	Unit  Unit
	exact *big.Rat // never modified once set; nil or stale means "use Value"
}

// New builds a quantity from a float (a computed result) and a unit symbol.
// It fails on a NaN or infinite value and on an unknown symbol.
func New(value float64, symbol string) (Quantity, error) {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return Quantity{}, newProblem("", CodeNotFinite, nil, "value %v is not a finite number", value)
	}
	u, ok := Lookup(symbol)
	if !ok {
		return Quantity{}, unknownUnit("", symbol, nil)
	}
	return Quantity{Value: value, Unit: u}, nil
}

// MustNew is New for constants in code and tests; it panics on error.
func MustNew(value float64, symbol string) Quantity {
	q, err := New(value, symbol)
	if err != nil {
		panic(err)
	}
	return q
}

// Exact returns the quantity's exact value in its own unit, as a new big.Rat.
func (q Quantity) Exact() *big.Rat {
	if q.exact != nil {
		if f, _ := q.exact.Float64(); f == q.Value {
			return new(big.Rat).Set(q.exact)
		}
	}
	x := new(big.Rat)
	if math.IsNaN(q.Value) || math.IsInf(q.Value, 0) {
		return x // unreachable through New and ParseQuantity; To refuses it
	}
	return x.SetFloat64(q.Value)
}

// To converts q exactly into the unit spelled to, which must have q's
// dimension. The result's Value is the correctly rounded float of the exact
// result; converting it back with To gives q's exact value again.
func (q Quantity) To(to string) (Quantity, error) {
	u, ok := Lookup(to)
	if !ok {
		return Quantity{}, unknownUnit("", to, []Dimension{q.Unit.Dimension})
	}
	if q.Unit.den == 0 {
		return Quantity{}, newProblem("", CodeUnitRequired, nil, "the quantity has no unit")
	}
	if u.Dimension != q.Unit.Dimension {
		return Quantity{}, newProblem("", CodeIncompatibleUnit, nil,
			"cannot convert %s (%s) to %s (%s)", q.Unit.Symbol, q.Unit.Dimension.describe(), u.Symbol, u.Dimension.describe())
	}
	if math.IsNaN(q.Value) || math.IsInf(q.Value, 0) {
		return Quantity{}, newProblem("", CodeNotFinite, nil, "value %v is not a finite number", q.Value)
	}
	// x [from] = x * from/canonical [canonical] = x * from/to [to].
	x := q.Exact()
	x.Mul(x, big.NewRat(q.Unit.num, q.Unit.den))
	x.Quo(x, big.NewRat(u.num, u.den))
	f, _ := x.Float64()
	if math.IsInf(f, 0) {
		return Quantity{}, newProblem("", CodeNotFinite, nil, "%v %s is too large to express in %s", q.Value, q.Unit.Symbol, u.Symbol)
	}
	return Quantity{Value: f, Unit: u, exact: x}, nil
}

// In returns q's value in the unit spelled to, rounded once from the exact
// conversion. It is To(to).Value.
func (q Quantity) In(to string) (float64, error) {
	c, err := q.To(to)
	if err != nil {
		return 0, err
	}
	return c.Value, nil
}

// Convert returns q's value in the unit spelled to (see [Quantity.In]).
func Convert(q Quantity, to string) (float64, error) { return q.In(to) }

// Canonical returns q's value in its dimension's canonical unit (mg, L, h,
// mg/L, h.mg/L, ...): the units the skills compute in. It cannot fail for a
// quantity from ParseQuantity or New.
func (q Quantity) Canonical() float64 {
	v, err := q.In(canonical[q.Unit.Dimension])
	if err != nil {
		panic(fmt.Sprintf("units: canonical value of %v %q: %v", q.Value, q.Unit.Symbol, err))
	}
	return v
}

// MarshalJSON writes {"value": v, "unit": "symbol"}, the shape ParseQuantity
// reads, with v in the shortest form that reads back as the same float.
func (q Quantity) MarshalJSON() ([]byte, error) {
	if math.IsNaN(q.Value) || math.IsInf(q.Value, 0) {
		return nil, fmt.Errorf("units: cannot encode %v %s as JSON", q.Value, q.Unit.Symbol)
	}
	sym, err := json.Marshal(q.Unit.Symbol)
	if err != nil {
		return nil, err
	}
	b := []byte(`{"value":`)
	b = strconv.AppendFloat(b, q.Value, 'g', -1, 64)
	b = append(b, `,"unit":`...)
	b = append(b, sym...)
	return append(b, '}'), nil
}

// String formats q as "12.5 mg".
func (q Quantity) String() string {
	return strconv.FormatFloat(q.Value, 'g', -1, 64) + " " + q.Unit.Symbol
}
