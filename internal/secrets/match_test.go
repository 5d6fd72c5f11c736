package secrets

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

const matchSecret = "s3cr3t-Tok/en+<&>9f2c ünï"

// jsonU escapes every character of s as \uXXXX, as a JSON encoder may.
func jsonU(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0xffff {
			r1, r2 := rune(0xd800+((r-0x10000)>>10)), rune(0xdc00+((r-0x10000)&0x3ff))
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			continue
		}
		fmt.Fprintf(&b, `\u%04X`, r)
	}
	return b.String()
}

// pctAll percent-encodes every byte of s.
func pctAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02x", s[i])
	}
	return b.String()
}

// encodings are the forms of a secret a tool could echo it in.
var encodings = map[string]func(string) string{
	"as sent":         func(s string) string { return s },
	"json string":     func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) },
	"json \\u":        jsonU,
	"base64 std":      func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"base64 raw":      func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) },
	"base64 url":      func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) },
	"base64 raw url":  func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
	"base64 offset 1": func(s string) string { return base64.StdEncoding.EncodeToString([]byte("x" + s + "yz")) },
	"base64 offset 2": func(s string) string { return base64.URLEncoding.EncodeToString([]byte("xy" + s)) },
	"hex":             func(s string) string { return hex.EncodeToString([]byte(s)) },
	"HEX":             func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) },
	"query escape":    url.QueryEscape,
	"path escape":     url.PathEscape,
	"every byte %":    pctAll,
	"base64 in \\u":   func(s string) string { return jsonU(base64.StdEncoding.EncodeToString([]byte(s))) },
	"hex in \\u":      func(s string) string { return jsonU(hex.EncodeToString([]byte(s))) },
	"query of base64": func(s string) string { return url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(s))) },
	"\\u then %":      func(s string) string { return url.QueryEscape(jsonU(s)) },
	"html numeric": func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, "&#%d;", r)
		}
		return b.String()
	},
	"html escape": strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace,
	"json in json": func(s string) string {
		inner, _ := json.Marshal(map[string]string{"t": jsonU(s)})
		b, _ := json.Marshal(string(inner))
		return string(b[1 : len(b)-1])
	},
}

// The secret is found in every usual encoding, in a JSON value, a JSON key,
// a body that is not JSON and a JSON document cut short.
func TestFoundInEncodings(t *testing.T) {
	s, err := New(map[string]string{"A": matchSecret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := s.Lookup("A")
	m := v.Matcher()
	for name, enc := range encodings {
		e := enc(matchSecret)
		for where, body := range map[string]string{
			"value":    `{"result": {"echo": "` + e + `"}}`,
			"key":      `{"` + e + `": 1}`,
			"array":    `["a", "` + e + `"]`,
			"not JSON": `<html><p>` + e + `</p>`,
			"cut":      `{"a": "` + e,
			"quoted":   `{"a": "x\"", "b": "` + e + `"}`,
		} {
			if !m.FoundIn([]byte(body)) {
				t.Errorf("%s in a %s: not found in %s", name, where, body)
			}
		}
		if !v.FoundIn([]byte(e)) {
			t.Errorf("%s alone: not found", name)
		}
	}
}

// Nothing is found where the secret is not: another value, the secret cut
// short, its characters in two strings, the zero Value.
func TestFoundInNot(t *testing.T) {
	s, _ := New(map[string]string{"A": matchSecret}, nil)
	v, _ := s.Lookup("A")
	m := v.Matcher()
	short := matchSecret[:len(matchSecret)-3]
	for _, body := range []string{
		`{"ok": true, "value": 4}`,
		`{"a": "` + short + `"}`,
		`{"a": "` + matchSecret[:10] + `", "b": "` + matchSecret[10:] + `"}`,
		base64.StdEncoding.EncodeToString([]byte(short)),
		hex.EncodeToString([]byte(short)),
		url.QueryEscape(short),
		jsonU(short),
		``,
		`\u`, `\ud800`, `%`, `%4`, `+`,
	} {
		if m.FoundIn([]byte(body)) {
			t.Errorf("found in %q", body)
		}
	}
	if (Value{}).FoundIn([]byte(matchSecret)) || (*Matcher)(nil).FoundIn([]byte(matchSecret)) {
		t.Error("the zero Value finds something")
	}
}

// The lenient unescape reads what encoding/json reads, on valid strings.
func TestUnescapeJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range []string{`a\"b\\c\/d\b\f\n\r\t`, `\u00e9\u00E9`, `\ud83d\ude00`, `\ud83dx`, `\ude00`, `\ud83d\u0041`, `plain`} {
		var want string
		if err := json.Unmarshal([]byte(`"`+s+`"`), &want); err != nil {
			t.Fatal(err)
		}
		if got := string(unescapeJSON([]byte(s))); got != want {
			t.Errorf("unescapeJSON(%s) = %q, encoding/json %q", s, got, want)
		}
	}
}

// FuzzUnescapeJSONWalk: in a JSON document, the unescaped bytes hold every
// key and string value as encoding/json decodes it, so searching them is
// searching every string of the parsed document.
func FuzzUnescapeJSONWalk(f *testing.F) {
	f.Add(`{"a\u0041": ["x\"y", {"\\": "\ud83d\ude00"}]}`)
	f.Add(`"\u00e9"`)
	f.Fuzz(func(t *testing.T, doc string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		flat := string(unescapeJSON([]byte(doc)))
		dec := json.NewDecoder(strings.NewReader(doc))
		for {
			tok, err := dec.Token()
			if err != nil {
				return
			}
			if s, ok := tok.(string); ok && utf8.ValidString(doc) && !strings.Contains(flat, s) {
				t.Fatalf("the string %q of %s is not in its unescaped bytes %q", s, doc, flat)
			}
		}
	})
}

// FuzzFoundIn: any encoding of any secret, put anywhere in any text, is
// found; and no input makes the matcher panic.
func FuzzFoundIn(f *testing.F) {
	names := make([]string, 0, len(encodings))
	for n := range encodings {
		names = append(names, n)
	}
	sort.Strings(names)
	f.Add("s3cr3t-token", "prefix ", " suffix", uint8(0))
	f.Add("Tok/en+=", `{"a": "`, `"}`, uint8(3))
	f.Add("ünï", `\`, `%`, uint8(7))
	f.Fuzz(func(t *testing.T, secret, before, after string, which uint8) {
		s, err := New(map[string]string{"A": secret}, nil)
		if err != nil || !utf8.ValidString(secret) || len(secret) < 8 {
			return // not a secret the store takes, or too short to find at every alignment
		}
		v, _ := s.Lookup("A")
		m := v.Matcher()
		_ = m.FoundIn([]byte(before + after)) // any text: no panic
		name := names[int(which)%len(names)]
		enc := encodings[name](secret)
		if !m.FoundIn([]byte(before + enc + after)) {
			t.Errorf("%s of %q not found in %q", name, secret, before+enc+after)
		}
		// As a tool server's JSON encoder would write it, in a key and a
		// value (one level of escapes more: "json in json" is at the
		// matcher's depth already).
		doc, _ := json.Marshal(map[string]any{before: []string{enc, after}, enc: 1})
		if name != "json in json" && !m.FoundIn(doc) {
			t.Errorf("%s of %q not found in the document %s", name, secret, doc)
		}
	})
}

// The worst answer for the matcher: a body at the output cap made of
// nothing but escapes, each decoding yielding more to decode.
func BenchmarkFoundInWorst(b *testing.B) {
	s, _ := New(map[string]string{"A": matchSecret}, nil)
	v, _ := s.Lookup("A")
	m := v.Matcher()
	body := []byte(`["` + strings.Repeat(`\\u0025\u0025%2541+%5c&amp;&#x26;`, 512<<10/34) + `"]`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if m.FoundIn(body) {
			b.Fatal("found")
		}
	}
}

// A usual answer at the output cap: plain JSON strings and numbers.
func BenchmarkFoundInPlain(b *testing.B) {
	s, _ := New(map[string]string{"A": matchSecret}, nil)
	v, _ := s.Lookup("A")
	m := v.Matcher()
	body := []byte(`{"rows": [` + strings.Repeat(`{"name": "aspirin", "dose_mg": 81.5},`, 512<<10/38) + `{}]}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if m.FoundIn(body) {
			b.Fatal("found")
		}
	}
}
