package jsonlogic

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// formatNumber is JavaScript's Number.prototype.toString(): the shortest
// digits that round-trip, in plain notation from 1e-7 up to 1e21 and in
// exponent notation ("1e+21", "1.5e-7") outside it.
func formatNumber(f float64) string { return string(appendNumber(nil, f)) }

// appendNumber appends formatNumber(f) to b.
func appendNumber(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case f == 0:
		return append(b, '0')
	}
	mag := math.Abs(f)
	if mag < 1e21 && mag == math.Trunc(mag) {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	if f < 0 {
		b = append(b, '-')
	}
	// d.ddde±x: digits is every d, and the value is 0.digits × 10^n.
	var scratch [32]byte
	e := strconv.AppendFloat(scratch[:0], mag, 'e', -1, 64)
	at := bytes.IndexByte(e, 'e')
	x, _ := strconv.Atoi(string(e[at+1:]))
	digits := e[:at]
	if len(digits) > 1 { // drop the point after the first digit
		copy(digits[1:], digits[2:])
		digits = digits[:len(digits)-1]
	}
	n, k := x+1, len(digits)
	switch {
	case k <= n && n <= 21:
		b = append(b, digits...)
		for i := k; i < n; i++ {
			b = append(b, '0')
		}
	case 0 < n && n <= 21:
		b = append(append(append(b, digits[:n]...), '.'), digits[n:]...)
	case -6 < n && n <= 0:
		b = append(b, "0."...)
		for i := n; i < 0; i++ {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		b = append(b, digits[0])
		if k > 1 {
			b = append(append(b, '.'), digits[1:]...)
		}
		b = append(b, 'e')
		if n-1 < 0 {
			b = append(b, '-')
		} else {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(abs(n-1)), 10)
	}
	return b
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// isSpace reports whether r is white space to JavaScript's string-to-number
// conversions (WhiteSpace and LineTerminator).
func isSpace(r rune) bool {
	return r == '\ufeff' || (r != '\u0085' && unicode.IsSpace(r))
}

// stringToNumber is JavaScript's Number(s): surrounding white space is
// ignored, "" is 0, 0x/0o/0b prefixes are hexadecimal, octal and binary, and
// anything that is not wholly a number is NaN.
func stringToNumber(s string) float64 {
	s = strings.TrimFunc(s, isSpace)
	if s == "" {
		return 0
	}
	if len(s) > 2 && s[0] == '0' {
		switch s[1] {
		case 'x', 'X':
			return radix(s[2:], 16)
		case 'o', 'O':
			return radix(s[2:], 8)
		case 'b', 'B':
			return radix(s[2:], 2)
		}
	}
	if decimalPrefix(s) != len(s) {
		return math.NaN()
	}
	return decimal(s)
}

// parseFloat is JavaScript's parseFloat(s): the longest decimal number at the
// start of s, after leading white space, or NaN if there is none.
func parseFloat(s string) float64 {
	s = strings.TrimLeftFunc(s, isSpace)
	n := decimalPrefix(s)
	if n == 0 {
		return math.NaN()
	}
	return decimal(s[:n])
}

// decimal converts a string that decimalPrefix accepted in full.
func decimal(s string) float64 {
	switch strings.TrimLeft(s, "+-") {
	case "Infinity":
		if s[0] == '-' {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return math.NaN()
		}
	}
	return f
}

// decimalPrefix is the length of the longest prefix of s that is a
// StrDecimalLiteral: an optional sign, then "Infinity" or digits with an
// optional fraction and exponent ("1", "1.", ".5", "1e3").
func decimalPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if strings.HasPrefix(s[i:], "Infinity") {
		return i + len("Infinity")
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
			digits++
		}
		if digits > 0 {
			i = j
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// radix converts the digits of a 0x, 0o or 0b literal, or returns NaN.
func radix(s string, base int) float64 {
	if s == "" {
		return math.NaN()
	}
	f := 0.0
	for i := 0; i < len(s); i++ {
		var d int
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			d = int(c - '0')
		case 'a' <= c && c <= 'f':
			d = int(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = int(c-'A') + 10
		default:
			return math.NaN()
		}
		if d >= base {
			return math.NaN()
		}
		f = f*float64(base) + float64(d)
	}
	return f
}

// toInteger is JavaScript's ToIntegerOrInfinity on a number: NaN is 0, and
// anything else is truncated toward zero.
func toInteger(f float64) float64 {
	if math.IsNaN(f) {
		return 0
	}
	return math.Trunc(f)
}

// smallInts are the results 0 to 255, boxed once, so that arithmetic yielding
// a small whole number does not allocate.
var smallInts = func() (a [256]any) {
	for i := range a {
		a[i] = float64(i)
	}
	return a
}()

// numberResult is the result of arithmetic: NaN and ±Infinity become null,
// and -0 becomes 0.
func numberResult(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	if f >= 0 && f < float64(len(smallInts)) && f == math.Trunc(f) {
		return smallInts[int(f)] // -0 lands here too, as 0
	}
	return f
}
