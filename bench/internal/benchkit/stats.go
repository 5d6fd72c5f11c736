package benchkit

import (
	"cmp"
	"slices"
)

// Percentile is the element at index len(xs)*p/100 of xs sorted, for p from 0
// to 99: no interpolation, the upper middle for the median of an even number.
// xs is not changed. It is how bench/RESULTS.md's figures of tools, writes,
// startup and prism were computed.
func Percentile[T cmp.Ordered](xs []T, p int) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)*p/100]
}

// Median is Percentile(xs, 50).
func Median[T cmp.Ordered](xs []T) T { return Percentile(xs, 50) }

// Verdict says whether a target was met, in the words the benchmarks print.
func Verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}
