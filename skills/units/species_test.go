package units

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// The table embedded is the shared data file, unchanged. The data README
// states no sha256 for it (it does for theoph.csv); the value here is the
// file's as copied unchanged from ../shared/data, and
// the references file should carry the same.
func TestTableSHA256(t *testing.T) {
	sum := sha256.Sum256(fda2005Table1)
	if got := hex.EncodeToString(sum[:]); got != FDA2005Table1SHA256 {
		t.Errorf("fda2005_table1.csv sha256 %s, want %s", got, FDA2005Table1SHA256)
	}
	if strings.Contains(string(fda2005Table1), "\r") {
		t.Error("the table has CR line endings")
	}
}

func TestSpeciesLookups(t *testing.T) {
	for _, c := range []struct {
		name          string
		weightKg, bsa float64
		km, divideBy  float64
		status        Status
	}{
		// Written out from FDA 2005 Table 1 as the data file gives it.
		{"human_adult", 60, 1.62, 37, 0, Verified},
		{"human_child_20kg", 20, 0.80, 25, 0, ToVerify},
		{"mouse", 0.02, 0.007, 3, 12.3, Verified},
		{"hamster", 0.08, 0.016, 5, 7.4, Verified},
		{"rat", 0.15, 0.025, 6, 6.2, Verified},
		{"ferret", 0.30, 0.043, 7, 5.3, Verified},
		{"guinea_pig", 0.40, 0.050, 8, 4.6, Verified},
		{"rabbit", 1.8, 0.150, 12, 3.1, Verified},
		{"dog", 10, 0.500, 20, 1.8, Verified},
		{"monkey", 3, 0.250, 12, 3.1, Verified},
		{"marmoset", 0.35, 0.060, 6, 6.2, Verified},
		{"squirrel_monkey", 0.60, 0.090, 7, 5.3, Verified},
		{"baboon", 12, 0.600, 20, 1.8, Verified},
		{"micro_pig", 20, 0.740, 27, 1.4, Verified},
		{"mini_pig", 40, 1.140, 35, 1.1, Verified},
	} {
		s, ok := Species(c.name)
		if !ok {
			t.Errorf("%s not found", c.name)
			continue
		}
		if s.RefBodyWeight.Unit.Symbol != "kg" || s.RefBodyWeight.Value != c.weightKg ||
			s.BSA.Unit.Symbol != "m2" || s.BSA.Value != c.bsa ||
			s.Km != c.km || s.DivideBy != c.divideBy || s.HasDivideBy() != (c.divideBy > 0) ||
			s.Status != c.status || s.Sources == "" {
			t.Errorf("%s: %+v", c.name, s)
		}
	}
	if n := len(AllSpecies()); n != 15 {
		t.Errorf("%d species, want 15", n)
	}
	// The weights keep their exact decimals: 0.15 kg is 150 g exactly.
	rat, _ := Species("rat")
	if g, _ := rat.RefBodyWeight.In("g"); g != 150 {
		t.Errorf("rat weight %v g", g)
	}
}

// TestSpeciesConsistency checks the table against itself by the relations the
// guidance states: km is body weight over surface area (within 5%, the
// table's rounding), and the divide-by factor is the human km (37) over the
// animal's, to the one decimal the table prints (dog and baboon: 37/20 = 1.85
// printed 1.8).
func TestSpeciesConsistency(t *testing.T) {
	human, _ := Species("human_adult")
	for _, s := range AllSpecies() {
		ratio := s.RefBodyWeight.Value / s.BSA.Value
		if math.Abs(ratio-s.Km)/s.Km > 0.05 {
			t.Errorf("%s: weight/BSA = %.3f, km %v", s.Name, ratio, s.Km)
		}
		if s.HasDivideBy() {
			if d := human.Km / s.Km; math.Abs(d-s.DivideBy) > 0.0500001 {
				t.Errorf("%s: 37/km = %.3f, divide-by %v", s.Name, d, s.DivideBy)
			}
		} else if !strings.HasPrefix(s.Name, "human") {
			t.Errorf("%s has no divide-by factor", s.Name)
		}
	}
}

func TestParseSpecies(t *testing.T) {
	if s, p := ParseSpecies("inputs.species[0]", "dog"); p != nil || s.Km != 20 {
		t.Errorf("%v %v", s, p)
	}
	for _, c := range []struct{ name, suggestion string }{
		{"Rat", "rat"}, {"RAT", "rat"}, {"guinea pig", "guinea_pig"}, {"Guinea-Pig", "guinea_pig"},
		{"mini-pig", "mini_pig"}, {"minipig", "mini_pig"}, {"cynomolgus", "monkey"}, {"human", "human_adult"},
		{"mice", "mouse"}, {"pig", ""}, {"zebrafish", ""}, {"", ""},
	} {
		_, p := ParseSpecies("inputs.species[2]", c.name)
		if p == nil || p.Code != CodeUnknownSpecies || p.Path != "inputs.species[2]" || p.Suggestion != c.suggestion ||
			len(p.Allowed) != 15 || p.Allowed[0] != "human_adult" || !strings.Contains(p.Message, "rat, ferret") {
			t.Errorf("%q: %+v", c.name, p)
		}
	}
}

// The build has one copy of Table 1 (skills/refdata's) and one parser of it,
// here: the skills that read the table (tox among them) read it through this
// package.
func TestOneCopyOfTheTable(t *testing.T) {
	var copies []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "fda2005_table1.csv" {
			copies = append(copies, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(copies) != 1 || copies[0] != filepath.Join("..", "refdata", "fda2005_table1.csv") {
		t.Errorf("copies of fda2005_table1.csv under skills/: %q, want only refdata's", copies)
	}
}

// The names a row's sources give in parentheses ("Nair & Jacob 2016
// (cynomolgus, rhesus, stumptail)" for monkey) are the animals the row
// stands for: each is a synonym of the row, so a caller who writes one is
// pointed to the row.
func TestSpeciesSynonymsCoverTheTablesOwnNames(t *testing.T) {
	found := 0
	for _, s := range AllSpecies() {
		open := strings.Index(s.Sources, "(")
		for open >= 0 {
			end := strings.Index(s.Sources[open:], ")")
			if end < 0 {
				break
			}
			for _, n := range strings.Split(s.Sources[open+1:open+end], ",") {
				n = strings.TrimSpace(n)
				if strings.ContainsAny(n, "0123456789") { // "(60 kg human)", "(NCI table)"
					continue
				}
				if strings.Contains(n, " ") {
					continue
				}
				found++
				if got := SpeciesSuggestion(n, []string{s.Name}); got != s.Name {
					t.Errorf("%s names %q: SpeciesSuggestion gives %q", s.Name, n, got)
				}
			}
			next := strings.Index(s.Sources[open+end:], "(")
			if next < 0 {
				break
			}
			open += end + next
		}
	}
	if found < 3 {
		t.Fatalf("found %d synonyms in the table's sources, want at least the monkey row's three", found)
	}
}

func TestSpeciesSuggestion(t *testing.T) {
	animals := []string{"mouse", "hamster", "rat", "dog", "monkey", "guinea_pig", "mini_pig", "other"}
	for in, want := range map[string]string{
		"Rat": "rat", "RAT": "rat", "rats": "rat", "ratt": "rat", "rhesus": "monkey", "Rhesus": "monkey",
		"Cynomolgus": "monkey", "guinea pig": "guinea_pig", "Mini-Pig": "mini_pig", "dgo": "dog",
		"human": "", "unicorn": "", "ra": "",
	} {
		if got := SpeciesSuggestion(in, animals); got != want {
			t.Errorf("SpeciesSuggestion(%q) = %q, want %q", in, got, want)
		}
	}
}
