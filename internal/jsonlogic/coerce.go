package jsonlogic

import (
	"encoding/json"
	"math"
	"strconv"
)

// The JavaScript conversions below are evaluator methods because their cost
// grows with the size of what they convert, and the evaluator charges that
// cost to its step budget (see cost), skipping the work once it is spent.

// kind is a value's JSON type.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject // an object, or any Go value that is not decoded JSON
)

func kindOf(v any) kind {
	switch v.(type) {
	case nil:
		return kindNull
	case bool:
		return kindBool
	case string:
		return kindString
	case []any:
		return kindArray
	case map[string]any:
		return kindObject
	case float64, json.Number, int, int64, int32, int16, int8, uint, uint64, uint32, uint16, uint8, float32:
		return kindNumber
	}
	return kindObject
}

// number is v's value if v is a number: a float64, a json.Number, or any Go
// integer or float type. It is free of charge, for use outside an evaluation.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		return parseNumber(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case int16:
		return float64(x), true
	case int8:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint8:
		return float64(x), true
	case float32:
		return float64(x), true
	}
	return 0, false
}

// parseNumber is a json.Number's value (NaN if it is not a number at all).
func parseNumber(n json.Number) float64 {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return math.NaN()
		}
	}
	return f
}

// truthy is JSONLogic truthiness: null, false, 0, NaN, "" and [] are falsy;
// everything else, "0" and {} included, is truthy.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case float64:
		return x != 0 && !math.IsNaN(x)
	case []any:
		return len(x) > 0
	case map[string]any:
		return true
	}
	if f, ok := number(v); ok {
		return f != 0 && !math.IsNaN(f)
	}
	return true
}

// longNumber is the length beyond which converting a string to a number is
// charged a step per byte (strconv.ParseFloat takes some 17ns a byte on long input).
const longNumber = 32

// number is the free number, charging for long json.Numbers.
func (e *evaluator) number(v any) (float64, bool) {
	if n, ok := v.(json.Number); ok && len(n) > longNumber && !e.cost(len(n)) {
		return math.NaN(), true
	}
	return number(v)
}

// truthy is the free truthy, charging for long json.Numbers.
func (e *evaluator) truthy(v any) bool {
	if n, ok := v.(json.Number); ok && len(n) > longNumber && !e.cost(len(n)) {
		return false
	}
	return truthy(v)
}

// stringToNumber is the free stringToNumber, charging for long strings.
func (e *evaluator) stringToNumber(s string) float64 {
	if len(s) > longNumber && !e.cost(len(s)) {
		return math.NaN()
	}
	return stringToNumber(s)
}

// toNumber is JavaScript's Number(v): null is 0, booleans are 1 and 0, strings
// convert as stringToNumber, an array converts as its joined string, and an
// object is NaN.
func (e *evaluator) toNumber(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case nil:
		return 0
	case bool:
		if x {
			return 1
		}
		return 0
	case string:
		return e.stringToNumber(x)
	case []any:
		return e.stringToNumber(e.toString(x))
	}
	if f, ok := e.number(v); ok {
		return f
	}
	return math.NaN()
}

// toFloat is JavaScript's parseFloat(String(v)), which + and * apply to their
// operands: numbers are themselves, strings give their leading number, and
// null, booleans and objects are NaN.
func (e *evaluator) toFloat(v any) float64 {
	var s string
	switch x := v.(type) {
	case float64:
		return x
	case string:
		s = x
	case []any:
		s = e.toString(x)
	default:
		if f, ok := e.number(v); ok {
			return f
		}
		return math.NaN()
	}
	if len(s) > longNumber && !e.cost(len(s)) {
		return math.NaN()
	}
	return parseFloat(s)
}

// toString is JavaScript's String(v): null is "null", numbers are formatted as
// JavaScript does, arrays are their elements joined with commas (null elements
// as ""), and objects are "[object Object]".
func (e *evaluator) toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case []any:
		return string(e.appendJoined(nil, x))
	}
	if f, ok := e.number(v); ok {
		return formatNumber(f)
	}
	return "[object Object]"
}

// appendJoined appends Array.prototype.join(",") of a, charging a step per
// element and per 8 bytes of strings, and stopping once the steps are spent.
func (e *evaluator) appendJoined(b []byte, a []any) []byte {
	for i, v := range a {
		if e.steps++; e.out() {
			return b
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = e.appendString(b, v)
	}
	return b
}

// appendString appends v as an element of a join: null as "", else String(v).
func (e *evaluator) appendString(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return b
	case string:
		if !e.cost(len(x) >> 3) {
			return b
		}
		return append(b, x...)
	case []any:
		return e.appendJoined(b, x)
	}
	if f, ok := e.number(v); ok {
		e.steps += 2 // formatting a number costs about as much as two steps
		return appendNumber(b, f)
	}
	return append(b, e.toString(v)...)
}

// scalar is a value reduced to a JavaScript primitive for comparison: a
// string, or a number.
type scalar struct {
	s        string
	n        float64
	isString bool
}

// primitive is ToPrimitive(v) for a non-null value, with booleans also taken
// to numbers: arrays become their joined string, objects "[object Object]".
func (e *evaluator) primitive(v any, k kind) scalar {
	switch k {
	case kindBool:
		if v.(bool) {
			return scalar{n: 1}
		}
		return scalar{n: 0}
	case kindNumber:
		f, _ := e.number(v)
		return scalar{n: f}
	case kindString:
		return scalar{s: v.(string), isString: true}
	}
	return scalar{s: e.toString(v), isString: true}
}

func (e *evaluator) scalarNumber(p scalar) float64 {
	if p.isString {
		return e.stringToNumber(p.s)
	}
	return p.n
}

// stringsEqual compares strings, charging a step per 128 bytes compared.
func (e *evaluator) stringsEqual(x, y string) bool {
	if len(x) == len(y) && len(x) > 128 {
		e.cost(len(x) >> 7)
	}
	return x == y
}

// strictEqual is JavaScript's ===, except that arrays and objects, which
// JavaScript compares by identity, are never equal.
func (e *evaluator) strictEqual(a, b any) bool {
	k := kindOf(a)
	return k == kindOf(b) && e.sameKindEqual(k, a, b)
}

func (e *evaluator) sameKindEqual(k kind, a, b any) bool {
	switch k {
	case kindNull:
		return true
	case kindBool:
		return a.(bool) == b.(bool)
	case kindNumber:
		x, _ := e.number(a)
		y, _ := e.number(b)
		return x == y
	case kindString:
		return e.stringsEqual(a.(string), b.(string))
	}
	return false
}

// looseEqual is JavaScript's ==: values of one type compare as ===; null
// equals only null; otherwise booleans become numbers and arrays and objects
// their string forms, and what is left compares as strings if both are, or
// else as numbers. Two arrays or objects are never equal.
func (e *evaluator) looseEqual(a, b any) bool {
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			return e.stringsEqual(x, y)
		}
	}
	ka, kb := kindOf(a), kindOf(b)
	switch {
	case ka == kb:
		return e.sameKindEqual(ka, a, b)
	case ka == kindNull || kb == kindNull:
		return false
	case ka >= kindArray && kb >= kindArray:
		return false
	}
	x, y := e.primitive(a, ka), e.primitive(b, kb)
	if x.isString && y.isString {
		return e.stringsEqual(x.s, y.s)
	}
	return e.scalarNumber(x) == e.scalarNumber(y)
}

// less is JavaScript's a < b, or a <= b if orEqual: two strings (arrays and
// objects become strings first) compare by code point; anything else compares
// as numbers, null as 0, and NaN is never less, equal or greater.
func (e *evaluator) less(a, b any, orEqual bool) bool {
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok {
			return lessNumber(x, y, orEqual)
		}
	}
	ka, kb := kindOf(a), kindOf(b)
	if (ka == kindString || ka >= kindArray) && (kb == kindString || kb >= kindArray) {
		x, y := e.primitive(a, ka).s, e.primitive(b, kb).s
		if n := min(len(x), len(y)); n > 128 {
			e.cost(n >> 7)
		}
		if orEqual {
			return x <= y
		}
		return x < y
	}
	return lessNumber(e.toNumber(a), e.toNumber(b), orEqual)
}

func lessNumber(x, y float64, orEqual bool) bool {
	if orEqual {
		return x <= y
	}
	return x < y
}
