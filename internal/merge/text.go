package merge

import (
	"sort"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// hunk replaces base lines [start, end) with lines.
type hunk struct {
	start, end int
	lines      []string
}

// Text merges two edits of the same base text line by line (a diff3): edits to
// different lines both apply; edits that overlap or touch conflict, unless they
// are the same edit. On conflict ok is false and merged is theirs.
func Text(base, theirs, yours string) (merged string, ok bool) {
	if theirs == yours || yours == base {
		return theirs, true
	}
	if theirs == base {
		return yours, true
	}
	baseLines := splitLines(base)
	th := hunks(base, theirs)
	yo := hunks(base, yours)
	all := append(append([]hunk{}, th...), yo...)
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].start != all[j].start {
			return all[i].start < all[j].start
		}
		return all[i].end < all[j].end
	})
	var applied []hunk
	for _, h := range all {
		if n := len(applied); n > 0 {
			prev := applied[n-1]
			if sameHunk(prev, h) {
				continue // both sides made the same edit
			}
			if h.start <= prev.end && prev.start <= h.end {
				return theirs, false
			}
		}
		applied = append(applied, h)
	}
	var b strings.Builder
	pos := 0
	for _, h := range applied {
		for _, l := range baseLines[pos:h.start] {
			b.WriteString(l)
		}
		for _, l := range h.lines {
			b.WriteString(l)
		}
		pos = h.end
	}
	for _, l := range baseLines[pos:] {
		b.WriteString(l)
	}
	return b.String(), true
}

func sameHunk(a, b hunk) bool {
	if a.start != b.start || a.end != b.end || len(a.lines) != len(b.lines) {
		return false
	}
	for i := range a.lines {
		if a.lines[i] != b.lines[i] {
			return false
		}
	}
	return true
}

// hunks lists the line edits that turn base into other, in base line numbers.
func hunks(base, other string) []hunk {
	dmp := diffmatchpatch.New()
	r1, r2, lineArray := dmp.DiffLinesToRunes(base, other)
	diffs := dmp.DiffMainRunes(r1, r2, false)
	var out []hunk
	pos := 0
	var cur *hunk
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, d := range diffs {
		lines := toLines(d.Text, lineArray)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			flush()
			pos += len(lines)
		case diffmatchpatch.DiffDelete:
			if cur == nil {
				cur = &hunk{start: pos, end: pos}
			}
			pos += len(lines)
			cur.end = pos
		case diffmatchpatch.DiffInsert:
			if cur == nil {
				cur = &hunk{start: pos, end: pos}
			}
			cur.lines = append(cur.lines, lines...)
		}
	}
	flush()
	return out
}

func toLines(text string, lineArray []string) []string {
	rs := []rune(text)
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = lineArray[r]
	}
	return out
}

func splitLines(s string) []string {
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}
