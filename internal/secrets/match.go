package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"hash/maphash"
	"html"
	"net/url"
	"unicode/utf16"
	"unicode/utf8"
)

// Matcher finds one secret's value in what a tool answered, so that the
// answer is refused rather than recorded for whoever may read the call.
//
// It looks for the value as it is and in the usual encodings of the exact
// value: base64 (standard and URL alphabets, padded or not, and, for a
// value of 7 bytes or more, at every alignment inside a longer encoded
// stream), hex (either case) and URL encoding
// (query and path escaping). It looks for these in the raw bytes and in what
// they decode to: the bytes with JSON escapes undone, which in a JSON
// document is every string value and object key decoded (so \u escapes
// hide nothing) and in other text (an error body need not be JSON, nor
// whole) every escape wherever it stands, the bytes percent-decoded (with
// and without "+" as a blank), and HTML character references read; decoded text is decoded again, down to
// maxDepth levels, so a secret base64'd inside a JSON string inside a JSON
// string is still found.
//
// Build one per call with Value.Matcher; it is safe for concurrent use.
type Matcher struct {
	exact  [][]byte // searched for as they are
	folded [][]byte // searched for in text with ASCII letters lower-cased
	n      int
}

// maxDepth is how many decodings deep a Matcher looks.
const maxDepth = 3

// minCore is the shortest base64 run of a secret looked for at an
// alignment other than the value's own: shorter runs would match by chance.
const minCore = 8

// Matcher returns the matcher of v. The zero Value's matcher finds nothing.
func (v Value) Matcher() *Matcher {
	m := &Matcher{n: len(v.v)}
	if v.v == "" {
		return m
	}
	raw := []byte(v.v)
	add := func(list *[][]byte, p string) {
		if p == "" {
			return
		}
		for _, q := range *list {
			if string(q) == p {
				return
			}
		}
		*list = append(*list, []byte(p))
	}
	add(&m.exact, v.v)
	add(&m.exact, url.QueryEscape(v.v))
	add(&m.exact, url.PathEscape(v.v))
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		// The unpadded form is a prefix of the padded one.
		add(&m.exact, enc.EncodeToString(raw))
		// The value inside a longer stream, k bytes after a 3-byte
		// boundary: the characters that hold only the value's bits.
		for k := 0; k < 3; k++ {
			s := enc.EncodeToString(append(make([]byte, k), raw...))
			first, last := (8*k+5)/6, 8*(k+len(raw))/6
			if last-first >= minCore {
				add(&m.exact, s[first:last])
			}
		}
	}
	add(&m.folded, hex.EncodeToString(raw))
	return m
}

// FoundIn reports whether v is in b, as Matcher describes.
func (v Value) FoundIn(b []byte) bool { return v.Matcher().FoundIn(b) }

// FoundIn reports whether the secret is in b, as it is, encoded or behind
// escapes (see Matcher).
func (m *Matcher) FoundIn(b []byte) bool {
	if m == nil || m.n == 0 {
		return false
	}
	seen := newViews()
	seen.first(b, maxDepth)
	return m.search(b, maxDepth, seen)
}

// Reach is how many bytes a form of the secret the matcher finds may take
// at most: a window reaching that far past a point holds whole every form
// that starts before it (the longest, nested escapes, expand each byte of
// the value at most 64 times).
func (m *Matcher) Reach() int { return 64*m.n + 16 }

// search looks for the secret in b and, depth levels down, in what b
// decodes to. A decoding already searched (the same bytes reached by
// another path: percent- then JSON-decoded, or JSON- then percent-) is not
// searched again.
func (m *Matcher) search(b []byte, depth int, seen *views) bool {
	if m.direct(b) {
		return true
	}
	if depth == 0 {
		return false
	}
	for _, decode := range decoders {
		if u := decode(b); u != nil && seen.first(u, depth-1) && m.search(u, depth-1, seen) {
			return true
		}
	}
	return false
}

// views remembers the texts a search has looked at, by hash, with the
// depth it looked below each.
type views struct {
	seed maphash.Seed
	seen map[uint64]int
}

func newViews() *views { return &views{seed: maphash.MakeSeed(), seen: map[uint64]int{}} }

// first reports whether b is yet to be searched depth levels down (new, or
// searched less deep before), and remembers that it is.
func (v *views) first(b []byte, depth int) bool {
	h := maphash.Bytes(v.seed, b)
	if d, ok := v.seen[h]; ok && d >= depth {
		return false
	}
	v.seen[h] = depth
	return true
}

// decoders are the decodings a Matcher looks through; each returns b
// decoded, or nil when it has nothing to decode in b.
var decoders = []func([]byte) []byte{
	// JSON escapes are undone wherever they stand. In a JSON document a
	// backslash stands only inside a string, so this decodes every key and
	// value in place, as encoding/json would (a test holds the two equal);
	// in other text (an error page, a body cut short) the escapes are read
	// all the same.
	func(b []byte) []byte {
		if bytes.IndexByte(b, '\\') < 0 {
			return nil
		}
		return unescapeJSON(b)
	},
	// HTML character references (&#115;, &#x73;, &lt;), which a page
	// showing the result would render as the secret.
	func(b []byte) []byte {
		if bytes.IndexByte(b, '&') < 0 || bytes.IndexByte(b, ';') < 0 {
			return nil
		}
		return []byte(html.UnescapeString(string(b)))
	},
	// Percent-encoding, as a path has it...
	func(b []byte) []byte {
		if bytes.IndexByte(b, '%') < 0 {
			return nil
		}
		return unpercent(b, false)
	},
	// ...and as a query has it, "+" a blank.
	func(b []byte) []byte {
		if bytes.IndexByte(b, '%') < 0 && bytes.IndexByte(b, '+') < 0 {
			return nil
		}
		return unpercent(b, true)
	},
}

func (m *Matcher) direct(b []byte) bool {
	for _, p := range m.exact {
		if bytes.Contains(b, p) {
			return true
		}
	}
	if len(m.folded) == 0 {
		return false
	}
	lower := bytes.ToLower(b) // ASCII only matters: hex digits
	for _, p := range m.folded {
		if bytes.Contains(lower, p) {
			return true
		}
	}
	return false
}

// unescapeJSON undoes JSON string escapes wherever they stand in b, quoted
// or not (a body cut short, or one that is not JSON, still has its \u
// escapes read). An escape it does not know stays as it is; a lone
// surrogate becomes U+FFFD, as encoding/json has it.
func unescapeJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		switch e := b[i+1]; e {
		case '"', '\\', '/', '\'':
			out = append(out, e)
			i++
		case 'b':
			out, i = append(out, '\b'), i+1
		case 'f':
			out, i = append(out, '\f'), i+1
		case 'n':
			out, i = append(out, '\n'), i+1
		case 'r':
			out, i = append(out, '\r'), i+1
		case 't':
			out, i = append(out, '\t'), i+1
		case 'u':
			r, ok := hex4(b[i+2:])
			if !ok {
				out = append(out, c)
				continue
			}
			i += 5
			if utf16.IsSurrogate(r) {
				d := utf8.RuneError
				if i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
					if r2, ok := hex4(b[i+3:]); ok {
						if x := utf16.DecodeRune(r, r2); x != utf8.RuneError {
							d, i = x, i+6
						}
					}
				}
				r = d
			}
			out = utf8.AppendRune(out, r)
		default:
			out = append(out, c)
		}
	}
	return out
}

// hex4 reads four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		d, ok := unhex(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// unpercent undoes %XX escapes (either case) wherever they stand; plus
// also reads "+" as a blank, as a query string does.
func unpercent(b []byte, plus bool) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '%' && i+2 < len(b):
			hi, ok1 := unhex(b[i+1])
			lo, ok2 := unhex(b[i+2])
			if ok1 && ok2 {
				out = append(out, hi<<4|lo)
				i += 2
				continue
			}
		case c == '+' && plus:
			c = ' '
		}
		out = append(out, c)
	}
	return out
}
