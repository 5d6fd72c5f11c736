package jsonlogic

import (
	"encoding/json"
	"math"
	"testing"
)

func TestFormatNumber(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0", math.Copysign(0, -1): "0", 1: "1", -1: "-1", 1.5: "1.5", -0.25: "-0.25",
		100: "100", 1e20: "100000000000000000000", 1e21: "1e+21", 1.5e21: "1.5e+21", 123e300: "1.23e+302",
		0.000001: "0.000001", 1e-7: "1e-7", 1.5e-7: "1.5e-7", 0.1: "0.1", 0.30000000000000004: "0.30000000000000004",
		123.456: "123.456", 5e-324: "5e-324", math.MaxFloat64: "1.7976931348623157e+308",
		math.Inf(1): "Infinity", math.Inf(-1): "-Infinity", 9007199254740993: "9007199254740992",
	} {
		if got := formatNumber(f); got != want {
			t.Errorf("formatNumber(%v) = %s, want %s", f, got, want)
		}
	}
	if got := formatNumber(math.NaN()); got != "NaN" {
		t.Errorf("formatNumber(NaN) = %s", got)
	}
}

func TestStringToNumber(t *testing.T) {
	nan := math.NaN()
	for s, want := range map[string]float64{
		"": 0, "  ": 0, "0": 0, "12": 12, " 12\n": 12, "\u00a012\ufeff": 12, "-1.5": -1.5, "+3": 3, ".5": 0.5, "5.": 5,
		"1e3": 1000, "1E-2": 0.01, "0x1F": 31, "0o17": 15, "0b101": 5, "Infinity": math.Inf(1), "-Infinity": math.Inf(-1),
		"1e999": math.Inf(1), "abc": nan, "12px": nan, "1e": nan, ".": nan, "-": nan, "0x": nan, "0xG": nan, "-0x10": nan,
		"inf": nan, "infinity": nan, "NaN": nan, "1_000": nan, "0x1p3": nan, "1,2": nan, "\u008512": nan,
	} {
		got := stringToNumber(s)
		if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("stringToNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestParseFloat(t *testing.T) {
	nan := math.NaN()
	for s, want := range map[string]float64{
		"3px": 3, "  -2.5e1x": -25, "1e": 1, "1e+": 1, ".5.5": 0.5, "Infinityx": math.Inf(1), "": nan, "x1": nan,
		"0x10": 0, "1,2": 1, "+.": nan,
	} {
		got := parseFloat(s)
		if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("parseFloat(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestLooseEquality checks == on pairs of values against JavaScript's answers.
func TestLooseEquality(t *testing.T) {
	obj := map[string]any{}
	for _, c := range []struct {
		a, b any
		want bool
	}{
		{nil, nil, true}, {nil, false, false}, {nil, 0.0, false}, {nil, "", false}, {nil, []any{}, false},
		{true, 1.0, true}, {true, "1", true}, {true, []any{1.0}, true}, {false, []any{}, true}, {false, "0", true},
		{false, "", true}, {true, "true", false}, {true, obj, false},
		{0.0, "", true}, {0.0, "0", true}, {1.0, "1.0", true}, {1.0, "x", false}, {0.0, []any{}, true},
		{5.0, []any{5.0}, true}, {5.0, []any{[]any{5.0}}, true}, {"5", []any{5.0}, true},
		{"[object Object]", obj, true}, {[]any{}, obj, false}, {obj, obj, false}, {[]any{}, []any{}, false},
		{json.Number("1.0"), 1.0, true}, {json.Number("1"), "1", true}, {json.Number("2"), int64(2), true},
		{int(3), "3", true}, {uint8(0), false, true},
	} {
		if got := new(evaluator).looseEqual(c.a, c.b); got != c.want {
			t.Errorf("%#v == %#v: got %v, want %v", c.a, c.b, got, c.want)
		}
		if got := new(evaluator).looseEqual(c.b, c.a); got != c.want {
			t.Errorf("%#v == %#v: got %v, want %v", c.b, c.a, got, c.want)
		}
	}
}

func TestStrictEquality(t *testing.T) {
	for _, c := range []struct {
		a, b any
		want bool
	}{
		{nil, nil, true}, {1.0, 1.0, true}, {json.Number("1e0"), 1.0, true}, {1.0, "1", false}, {true, 1.0, false},
		{"a", "a", true}, {[]any{}, []any{}, false}, {map[string]any{}, map[string]any{}, false}, {false, nil, false},
	} {
		if got := new(evaluator).strictEqual(c.a, c.b); got != c.want {
			t.Errorf("%#v === %#v: got %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestLess(t *testing.T) {
	obj := map[string]any{}
	for _, c := range []struct {
		a, b     any
		lt, le   bool
		describe string
	}{
		{1.0, 2.0, true, true, "numbers"},
		{2.0, 2.0, false, true, "equal numbers"},
		{"a", "b", true, true, "strings"},
		{"a", "a", false, true, "equal strings"},
		{"10", "9", true, true, "numeric strings compare as strings"},
		{"10", 9.0, false, false, "string and number compare as numbers"},
		{nil, 0.0, false, true, "null is 0"},
		{nil, 1.0, true, true, "null is 0"},
		{"x", 1.0, false, false, "NaN"},
		{1.0, "x", false, false, "NaN"},
		{false, true, true, true, "booleans are numbers"},
		{[]any{1.0}, 2.0, true, true, "[1] is 1"},
		{[]any{1.0, 2.0}, "1,3", true, true, "array as a string"},
		{obj, "[object Object]", false, true, "object as a string"},
		{obj, 1.0, false, false, "object is NaN"},
		{json.Number("1"), 1.5, true, true, "json.Number"},
		{"\uffff", "\U0001F600", true, true, "code point order"},
	} {
		if got := new(evaluator).less(c.a, c.b, false); got != c.lt {
			t.Errorf("%s: %#v < %#v = %v", c.describe, c.a, c.b, got)
		}
		if got := new(evaluator).less(c.a, c.b, true); got != c.le {
			t.Errorf("%s: %#v <= %#v = %v", c.describe, c.a, c.b, got)
		}
	}
}

func TestTruthy(t *testing.T) {
	for _, c := range []struct {
		v    any
		want bool
	}{
		{nil, false}, {false, false}, {true, true}, {0.0, false}, {math.NaN(), false}, {-1.0, true}, {"", false},
		{"0", true}, {" ", true}, {[]any{}, false}, {[]any{nil}, true}, {map[string]any{}, true},
		{json.Number("0"), false}, {json.Number("0.0"), false}, {json.Number("2"), true}, {0, false}, {int64(7), true},
		{struct{}{}, true},
	} {
		if got := truthy(c.v); got != c.want {
			t.Errorf("truthy(%#v) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestToString(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{nil, "null"}, {true, "true"}, {2.50, "2.5"}, {json.Number("1.0"), "1"}, {[]any{nil, 1.0, []any{"a", nil}}, ",1,a,"},
		{map[string]any{"a": 1.0}, "[object Object]"}, {int(-4), "-4"},
	} {
		if got := new(evaluator).toString(c.v); got != c.want {
			t.Errorf("toString(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
}
