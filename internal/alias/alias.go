// Package alias is the rule book of the handle registry (SPEC-001 §13.4): what
// a handle may look like, which ones nobody but an admin may claim, which two
// handles are too alike to belong to different holders, and the content of
// the registry's entries, the `alias` artifacts. It owns no storage: the store
// writes the entries (internal/store/alias.go) in one transaction with the
// rest of a claim or a rename, and asks this package every question of form.
//
// The rules, so that a hostile agent cannot pass for someone else:
//   - A handle is 2 to 32 characters of ASCII a-z, 0-9, '-' and '_', starting
//     with a letter or digit. Upper case is folded to lower case (`@Ada` is
//     `@ada`); anything else, a Cyrillic 'а' among them, is refused, so no
//     handle is a homoglyph of another in another script.
//   - Two handles whose skeletons are equal are too alike (`ada-1`, `ada_l`,
//     `adal`): the skeleton folds the ASCII look-alikes (0/o, 1/l/i, 5/s, rn/m,
//     vv/w) and drops '-' and '_'. A claim whose skeleton is taken is refused,
//     naming the handle it resembles.
//   - Reserved names (admin, root, system, scidex, everyone, …) and handles
//     with a reserved word as a '-'/'_' separated part (`scidex-admin`) are
//     admins' only.
//   - A renamed handle becomes a tombstone: it goes on resolving to its actor,
//     says what it was renamed to, and is never claimable by anyone else; its
//     actor may take it back by renaming to it.
package alias

import (
	"fmt"
	"strings"
	"time"
)

// Type is the artifact type of the registry's entries; an entry's id is its
// handle, normalised.
const Type = "alias"

// Kinds of entry: a persona handle names one actor, a role alias the members
// of a role artifact.
const (
	KindPersona = "persona"
	KindRole    = "role"
)

// States of an entry.
const (
	StateActive    = "active"
	StateTombstone = "tombstone"
)

// Length bounds of a handle.
const (
	MinLen = 2
	MaxLen = 32
)

// MaxHops bounds how many renames resolution follows from a tombstone.
const MaxHops = 32

// Content is an entry's content (the alias schema document describes each
// field).
type Content struct {
	Kind      string     `json:"kind"`
	Actor     string     `json:"actor,omitempty"`
	Role      string     `json:"role,omitempty"`
	State     string     `json:"state"`
	Skeleton  string     `json:"skeleton"`
	ClaimedAt time.Time  `json:"claimed_at"`
	RenamedTo string     `json:"renamed_to,omitempty"`
	RenamedAt *time.Time `json:"renamed_at,omitempty"`
}

// Normalize turns what a caller typed (`@Ada`, `ada`) into the handle it names
// (`ada`), or says why it names none. The reason is a sentence for a
// ValidationFailed; it names what was wanted.
func Normalize(in string) (string, error) {
	s := strings.TrimPrefix(in, "@")
	if s == "" {
		return "", fmt.Errorf("a handle needs %d to %d characters after the @", MinLen, MaxLen)
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + ('a' - 'A'))
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case (r == '-' || r == '_') && i > 0:
			b.WriteRune(r)
		case r > 0x7f:
			return "", fmt.Errorf("a handle is ASCII letters, digits, '-' and '_' only; %q (U+%04X) is not (look-alikes from other scripts are refused)", r, r)
		default:
			return "", fmt.Errorf("a handle is ASCII letters, digits, '-' and '_', starting with a letter or digit; %q is not allowed there", r)
		}
	}
	out := b.String()
	if n := len(out); n < MinLen || n > MaxLen {
		return "", fmt.Errorf("a handle is %d to %d characters; this one has %d", MinLen, MaxLen, n)
	}
	return out, nil
}

// confusables are the ASCII look-alikes the skeleton folds, longest first.
var confusables = strings.NewReplacer("rn", "m", "vv", "w", "0", "o", "1", "l", "i", "l", "|", "l", "5", "s", "-", "", "_", "")

// Skeleton is what a normalised handle looks like to a hurried reader: two
// handles with the same skeleton cannot have different holders.
func Skeleton(handle string) string {
	// Fold until stable: "rrnn" → "rmn" → "rmn"; two passes reach it for these pairs.
	s := confusables.Replace(handle)
	return confusables.Replace(s)
}

// reserved are the names only admins claim: they would pass for the server,
// its operators, or everyone.
var reserved = []string{
	"admin", "admins", "administrator", "root", "system", "sysadmin", "scidex", "substrate", "server",
	"moderator", "mod", "mods", "staff", "support", "security", "official", "operator", "owner",
	"everyone", "all", "here", "channel", "actors", "actor", "role", "roles", "group", "groups",
	"me", "self", "you", "null", "nil", "none", "undefined", "anonymous", "unknown", "help", "noreply",
}

var reservedSkeletons = func() map[string]string {
	m := map[string]string{}
	for _, r := range reserved {
		m[Skeleton(r)] = r
	}
	return m
}()

// ReservedWord reports the reserved word a normalised handle is, looks like,
// or holds as a part ("scidex-admin" holds "admin"); "" when it has none.
func ReservedWord(handle string) string {
	if w, ok := reservedSkeletons[Skeleton(handle)]; ok {
		return w
	}
	for _, part := range strings.FieldsFunc(handle, func(r rune) bool { return r == '-' || r == '_' }) {
		if w, ok := reservedSkeletons[Skeleton(part)]; ok && len(part) >= 3 {
			return w
		}
	}
	return ""
}
