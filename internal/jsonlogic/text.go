package jsonlogic

import (
	"math"
	"unicode/utf8"
)

// jsSubstr is JavaScript's String.prototype.substr(start, length) counting
// code points: a negative start counts back from the end, and length is
// clamped to what is there (pass +Inf for "to the end").
func jsSubstr(s string, start, length float64) string {
	size := float64(utf8Count(s))
	switch start = toInteger(start); {
	case start < 0:
		start = math.Max(size+start, 0)
	default:
		start = math.Min(start, size)
	}
	length = math.Min(math.Max(toInteger(length), 0), size)
	end := math.Min(start+length, size)
	if start >= end {
		return ""
	}
	return runeSlice(s, int(start), int(end))
}

// utf8Count is how many code points s holds (each invalid byte counting as one).
func utf8Count(s string) int { return utf8.RuneCountInString(s) }

// runeSlice is s from code point from to code point to.
func runeSlice(s string, from, to int) string {
	i, begin := 0, len(s)
	for off := range s {
		if i == from {
			begin = off
		}
		if i == to {
			return s[begin:off]
		}
		i++
	}
	return s[begin:]
}
