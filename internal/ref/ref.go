// Package ref parses and formats artifact references.
//
// A reference names an artifact as "<type>:<id>" or one exact version of it as
// "<type>:<id>@<content hash>". It is the string every client passes around, so
// the parser is strict and its errors say exactly what is wrong.
package ref

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ref is a parsed artifact reference. Hash is empty for an unpinned reference.
type Ref struct {
	Type string
	ID   string
	Hash string
}

// MaxLen bounds a reference so a hostile client cannot make us hash or index megabytes.
const MaxLen = 512

var (
	typeRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	hashRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// Error explains why a string is not a reference. Value is the string received.
type Error struct {
	Value  string
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("malformed ref %q: %s", e.Value, e.Reason) }

// Parse reads "<type>:<id>" or "<type>:<id>@sha256:<hex>". The type is everything
// before the first colon; the id runs to the '@', so an id may itself hold a colon
// when its type allows it (paper:PMID:123). Whether an id is acceptable for its
// type is the schema's business, not the parser's; the parser only refuses what
// can never be an id: empty, whitespace, control characters.
func Parse(s string) (Ref, error) {
	if s == "" {
		return Ref{}, &Error{s, "empty"}
	}
	if len(s) > MaxLen {
		return Ref{}, &Error{truncate(s), fmt.Sprintf("longer than %d bytes", MaxLen)}
	}
	typ, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Ref{}, &Error{s, `expected "<type>:<id>" or "<type>:<id>@<hash>"`}
	}
	if !typeRE.MatchString(typ) {
		return Ref{}, &Error{s, fmt.Sprintf("type %q must match %s", typ, typeRE)}
	}
	id, hash, pinned := strings.Cut(rest, "@")
	if id == "" {
		return Ref{}, &Error{s, "id is empty"}
	}
	if !utf8.ValidString(id) {
		return Ref{}, &Error{s, "id is not valid UTF-8"}
	}
	for _, r := range id {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return Ref{}, &Error{s, fmt.Sprintf("id contains %q", r)}
		}
	}
	if pinned && !hashRE.MatchString(hash) {
		return Ref{}, &Error{s, `hash must be "sha256:" and 64 lowercase hex digits`}
	}
	return Ref{Type: typ, ID: id, Hash: hash}, nil
}

// MustParse is Parse for constants in tests and seeds; it panics on a bad reference.
func MustParse(s string) Ref {
	r, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return r
}

// String formats the reference, pinned when it carries a hash.
func (r Ref) String() string {
	if r.Hash != "" {
		return r.Type + ":" + r.ID + "@" + r.Hash
	}
	return r.Type + ":" + r.ID
}

// Unpinned returns the reference without its version.
func (r Ref) Unpinned() Ref { return Ref{Type: r.Type, ID: r.ID} }

// Pinned returns the reference to one exact version.
func (r Ref) Pinned(hash string) Ref { return Ref{Type: r.Type, ID: r.ID, Hash: hash} }

// IsPinned reports whether the reference names one exact version.
func (r Ref) IsPinned() bool { return r.Hash != "" }

// ValidType reports whether s is a well-formed type name.
func ValidType(s string) bool { return typeRE.MatchString(s) }

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
