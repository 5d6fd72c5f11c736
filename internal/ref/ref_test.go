package ref

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	hash := "sha256:" + strings.Repeat("ab", 32)
	good := []struct {
		in   string
		want Ref
	}{
		{"hypothesis:h1", Ref{"hypothesis", "h1", ""}},
		{"paper:PMID:123", Ref{"paper", "PMID:123", ""}},
		{"wiki_page:apoe-e4@" + hash, Ref{"wiki_page", "apoe-e4", hash}},
		{"paper:PMID:9@" + hash, Ref{"paper", "PMID:9", hash}},
	}
	for _, c := range good {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Parse(%q) = %+v, want %+v", c.in, got, c.want)
		}
		if got.String() != c.in {
			t.Errorf("round trip %q -> %q", c.in, got.String())
		}
	}
	bad := map[string]string{
		"":                                 "empty",
		"hypothesis":                       "expected",
		"Hypothesis:h1":                    "type",
		"hypothesis:":                      "id is empty",
		"hypothesis:@" + hash:              "id is empty",
		"hypothesis:a b":                   "id contains",
		"hypothesis:h1@":                   "hash must be",
		"hypothesis:h1@md5:00":             "hash must be",
		"hypothesis:h1@" + hash + "@x":     "hash must be",
		"1abc:x":                           "type",
		strings.Repeat("a", MaxLen) + ":x": "longer than",
		"hypothesis:\xff":                  "UTF-8",
	}
	for in, wantReason := range bad {
		_, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) accepted a malformed ref", in)
			continue
		}
		if !strings.Contains(err.Error(), wantReason) || !strings.HasPrefix(err.Error(), "malformed ref") {
			t.Errorf("Parse(%q) error %q, want it to mention %q", in, err, wantReason)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"hypothesis:h1", "paper:PMID:1", "a:b@sha256:" + strings.Repeat("0", 64), "x", ":", "@", "a:@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		// Whatever parses must format back to itself and parse to the same value.
		if r.String() != s {
			t.Fatalf("Parse(%q).String() = %q", s, r.String())
		}
		again, err := Parse(r.String())
		if err != nil || again != r {
			t.Fatalf("reparse of %q: %+v, %v", s, again, err)
		}
		if strings.Contains(r.ID, "@") || r.Type == "" || r.ID == "" {
			t.Fatalf("Parse(%q) gave an impossible ref %+v", s, r)
		}
	})
}
