// Package toolname is the one spelling of a tool's name, which is also the
// name of a skill it implements and of the skill a skill_call tool's packets
// ask for: lower-case letters, digits, '_' and '-', in dot-separated segments
// that each begin with a letter (pk.nca, text-stats, literature.evidence_review).
// Every check of such a name, in Go or in a schema document, uses Pattern;
// internal/schema's tests hold the documents to it.
package toolname

import "regexp"

// Pattern is the name's regular expression, as Go and JSON Schema read it.
const Pattern = `^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)*$`

// MaxLength is the longest name, in bytes.
const MaxLength = 128

// Rule says what Pattern admits, for an error message.
const Rule = "lower-case letters, digits, '_' and '-', in dot-separated segments that each begin with a letter, e.g. pk.nca or text-stats"

var re = regexp.MustCompile(Pattern)

// Valid reports whether s is a well-formed name no longer than MaxLength.
func Valid(s string) bool {
	return len(s) <= MaxLength && re.MatchString(s)
}
