package data

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// value is a parsed cell or bound: n for integer (exact), f for number, t for
// date. Only the field of the column's type is meaningful.
type value struct {
	n int64
	f float64
	t time.Time
}

// parseValue reads s as a value of type typ, or says why it is not one.
func parseValue(typ, s string) (value, error) {
	switch typ {
	case TypeInteger:
		if !isInteger(s) {
			return value{}, fmt.Errorf("%q is not an integer", s)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return value{}, fmt.Errorf("integer %q is outside the 64-bit range", s)
		}
		return value{n: n}, nil
	case TypeNumber:
		if !isDecimal(s) {
			return value{}, fmt.Errorf("%q is not a decimal number", s)
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return value{}, fmt.Errorf("number %q is outside the float64 range", s)
		}
		return value{f: f}, nil
	case TypeBoolean:
		if !strings.EqualFold(s, "true") && !strings.EqualFold(s, "false") {
			return value{}, fmt.Errorf("%q is not true or false", s)
		}
		return value{}, nil
	case TypeDate:
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return value{}, fmt.Errorf("%q is not a calendar date YYYY-MM-DD", s)
		}
		return value{t: t}, nil
	}
	return value{}, nil
}

// compare orders two values of type typ: -1, 0 or +1.
func compare(typ string, a, b value) int {
	switch typ {
	case TypeInteger:
		return cmp3(a.n < b.n, a.n > b.n)
	case TypeNumber:
		return cmp3(a.f < b.f, a.f > b.f)
	case TypeDate:
		return a.t.Compare(b.t)
	}
	return 0
}

func cmp3(less, more bool) int {
	switch {
	case less:
		return -1
	case more:
		return 1
	}
	return 0
}

// isInteger reports whether s is [+-]?[0-9]+.
func isInteger(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return s != "" && digits(s) == len(s)
}

// isDecimal reports whether s is [+-]?(d+(.d*)?|.d+)([eE][+-]?d+)?, the
// plain decimal forms strconv.ParseFloat reads, without its NaN, Inf, hex and
// underscore forms, which are not measurements.
func isDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	whole := digits(s)
	s = s[whole:]
	frac := 0
	if s != "" && s[0] == '.' {
		s = s[1:]
		frac = digits(s)
		s = s[frac:]
	}
	if whole+frac == 0 {
		return false
	}
	if s != "" && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s != "" && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		exp := digits(s)
		if exp == 0 {
			return false
		}
		s = s[exp:]
	}
	return s == ""
}

// digits counts the leading ASCII digits of s.
func digits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
