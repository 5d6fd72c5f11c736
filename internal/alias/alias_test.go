package alias

import (
	"strings"
	"testing"
)

func TestNormalizeFoldsCaseAndRefusesEverythingElse(t *testing.T) {
	for in, want := range map[string]string{"@Ada": "ada", "ada": "ada", "@trem2-bot": "trem2-bot", "R_2": "r_2"} {
		got, err := Normalize(in)
		if err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, says := range map[string]string{
		"@":                           "2 to 32",
		"@a":                          "2 to 32",
		"@" + strings.Repeat("a", 33): "this one has 33",
		"@\u0430da":                   "U+0430", // Cyrillic а, a homoglyph of a
		"@ada\u200b":                  "U+200B", // zero-width space
		"@-ada":                       "starting with a letter or digit",
		"@ada bob":                    `' '`,
		"@ada.bob":                    `'.'`,
		"@@ada":                       `'@'`,
	} {
		_, err := Normalize(in)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("Normalize(%q) = %v; want a refusal saying %q", in, err, says)
		}
	}
}

func TestSkeletonsOfLookAlikesAreEqual(t *testing.T) {
	for _, group := range [][]string{
		{"ada1", "adal", "adai", "ada-l", "ada_1"},
		{"bob0", "bobo", "b-o-b-o"},
		{"morn", "mom", "rnom"},
		{"wes", "vves", "vve5"},
	} {
		for _, h := range group[1:] {
			if Skeleton(h) != Skeleton(group[0]) {
				t.Errorf("Skeleton(%q) = %q, Skeleton(%q) = %q: want equal", h, Skeleton(h), group[0], Skeleton(group[0]))
			}
		}
	}
	if Skeleton("ada") == Skeleton("adb") {
		t.Error("ada and adb share a skeleton")
	}
}

func TestReservedWords(t *testing.T) {
	for h, want := range map[string]string{"admin": "admin", "adm1n": "admin", "ada-admin": "admin", "scidex-bot": "scidex", "r00t": "root",
		"everyone": "everyone", "ada-0fficial": "official", "ada": "", "badminton": "", "ada-me": ""} {
		if got := ReservedWord(h); got != want {
			t.Errorf("ReservedWord(%q) = %q, want %q", h, got, want)
		}
	}
}
