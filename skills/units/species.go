package units

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/scidex/substrate/skills/refdata"
)

// fda2005Table1 is FDA CDER (July 2005), "Estimating the Maximum Safe
// Starting Dose in Initial Clinical Trials for Therapeutics in Adult Healthy
// Volunteers", Table 1, as gathered from the secondary sources each row
// names: the build's one copy, skills/refdata's fda2005_table1.csv.
var fda2005Table1 = func() []byte {
	b, err := refdata.FS.ReadFile("fda2005_table1.csv")
	if err != nil {
		panic("units: " + err.Error())
	}
	return b
}()

// FDA2005Table1SHA256 is the sha256 of the embedded table (LF line endings).
// A test checks it, so the table cannot change without this constant, and the
// references file can carry the same value.
const FDA2005Table1SHA256 = "1bb0d6925e90d8a61c7e3efdc805d392a42101c9a3c7c31258dc0ac12885167f"

// Status is a reference fact's standing, carried unchanged from the data:
// verified against its sources, or still to verify. A skill released as
// preview or available may rely only on verified facts.
type Status string

// The two statuses.
const (
	Verified Status = "verified"
	ToVerify Status = "to_verify"
)

// SpeciesInfo is one row of FDA 2005 Table 1.
type SpeciesInfo struct {
	// Name is the identifier inputs use: "rat", "guinea_pig", "human_adult".
	Name string
	// RefBodyWeight is the table's reference body weight, in kg.
	RefBodyWeight Quantity
	// BSA is the table's body surface area at that weight, in m2.
	BSA Quantity
	// Km is the factor, in kg/m2, that turns a dose in mg/kg into mg/m2
	// (dose in mg/m2 = Km x dose in mg/kg); 37 for the 60 kg adult human.
	Km float64
	// DivideBy is the table's factor to divide an animal dose in mg/kg by to
	// get the human equivalent dose in mg/kg; 0 for the human rows, which
	// have none (see HasDivideBy).
	DivideBy float64
	// Status is the row's status in the data: verified or to_verify.
	Status Status
	// Sources names where the row's numbers were checked.
	Sources string
}

// HasDivideBy reports whether the row gives a divide-by factor.
func (s SpeciesInfo) HasDivideBy() bool { return s.DivideBy > 0 }

var species = func() []SpeciesInfo {
	rows, err := ParseFDA2005Table1(fda2005Table1)
	if err != nil {
		// The table is part of the build and a test parses it: a failure
		// here is a build defect, not an input error.
		panic("units: embedded " + err.Error())
	}
	return rows
}()

// FDA2005Table1CSV returns the embedded table's bytes (a copy): the one copy
// in the build, which every skill reading Table 1 parses through
// ParseFDA2005Table1.
func FDA2005Table1CSV() []byte { return append([]byte(nil), fda2005Table1...) }

// fda2005Columns is the table's header.
var fda2005Columns = []string{"species", "ref_body_weight_kg", "bsa_m2", "km", "divide_by", "status", "sources"}

// HumanAdult is the row of the 60 kg adult human (km 37), which the table
// must have.
const HumanAdult = "human_adult"

// ParseFDA2005Table1 reads Table 1 from CSV, strictly, because a silently
// misread constant would go on to print a wrong dose: the header must be the
// table's, every weight, surface area and km a positive decimal, every animal
// row (any species not named human_*) must give a positive divide-by factor,
// every status be verified or to_verify, no species repeated, and the
// human_adult row present. The error names the line and the column.
func ParseFDA2005Table1(data []byte) ([]SpeciesInfo, error) {
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("fda2005_table1.csv: %w", err)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("fda2005_table1.csv: no rows")
	}
	if strings.Join(rows[0], ",") != strings.Join(fda2005Columns, ",") {
		return nil, fmt.Errorf("fda2005_table1.csv: header %q, want %q", rows[0], fda2005Columns)
	}
	out := make([]SpeciesInfo, 0, len(rows)-1)
	seen := map[string]bool{}
	for i, row := range rows[1:] {
		bad := func(col int) error {
			return fmt.Errorf("fda2005_table1.csv line %d (%s): %s %q is not a positive number", i+2, row[0], fda2005Columns[col], row[col])
		}
		s := SpeciesInfo{Name: row[0], Status: Status(row[5]), Sources: row[6]}
		switch {
		case s.Name == "":
			return nil, fmt.Errorf("fda2005_table1.csv line %d: empty species", i+2)
		case seen[s.Name]:
			return nil, fmt.Errorf("fda2005_table1.csv line %d: species %q repeated", i+2, s.Name)
		}
		seen[s.Name] = true
		var ok bool
		if s.RefBodyWeight, ok = exactQuantity(row[1], "kg"); !ok {
			return nil, bad(1)
		}
		if s.BSA, ok = exactQuantity(row[2], "m2"); !ok {
			return nil, bad(2)
		}
		if s.Km, err = strconv.ParseFloat(row[3], 64); err != nil || !(s.Km > 0) {
			return nil, bad(3)
		}
		if row[4] != "" || !strings.HasPrefix(s.Name, "human_") {
			if s.DivideBy, err = strconv.ParseFloat(row[4], 64); err != nil || !(s.DivideBy > 0) {
				return nil, bad(4)
			}
		}
		if s.Status != Verified && s.Status != ToVerify {
			return nil, fmt.Errorf("fda2005_table1.csv line %d (%s): status %q, want verified or to_verify", i+2, s.Name, s.Status)
		}
		out = append(out, s)
	}
	if !seen[HumanAdult] {
		return nil, fmt.Errorf("fda2005_table1.csv: no %s row", HumanAdult)
	}
	return out, nil
}

// exactQuantity reads a positive decimal from the table, keeping its exact
// rational as ParseQuantity does.
func exactQuantity(lit, symbol string) (Quantity, bool) {
	x, ok := new(big.Rat).SetString(lit)
	if !ok || x.Sign() <= 0 {
		return Quantity{}, false
	}
	f, _ := x.Float64()
	q := MustNew(f, symbol)
	q.exact = x
	return q, true
}

// AllSpecies lists the table's rows, in the table's order.
func AllSpecies() []SpeciesInfo { return append([]SpeciesInfo(nil), species...) }

// Species finds a species by its exact name.
func Species(name string) (SpeciesInfo, bool) {
	for _, s := range species {
		if s.Name == name {
			return s, true
		}
	}
	return SpeciesInfo{}, false
}

var speciesAliases = map[string]string{
	"human": "human_adult", "adult": "human_adult", "man": "human_adult",
	"child": "human_child_20kg", "human_child": "human_child_20kg",
	"mice": "mouse", "rats": "rat", "dogs": "dog", "beagle": "dog", "rabbits": "rabbit",
	"guineapig": "guinea_pig", "minipig": "mini_pig", "micropig": "micro_pig",
	"monkeys": "monkey", "cynomolgus": "monkey", "cynomolgus_monkey": "monkey", "cyno": "monkey",
	"rhesus": "monkey", "rhesus_monkey": "monkey", "stumptail": "monkey", "macaque": "monkey",
}

// SpeciesSuggestion is the name among allowed that a caller who wrote name
// most likely meant, or "": the same name in another case or spelling
// (Rat, guinea pig), a synonym (rhesus, cynomolgus and stumptail are the
// macaques Table 1's monkey row stands for, as its sources say; rats,
// beagle), or the only allowed name a typo away (ratt, dgo). A synonym of a
// row outside allowed (human for a skill that takes animals only) is no
// suggestion.
func SpeciesSuggestion(name string, allowed []string) string {
	key := strings.NewReplacer(" ", "_", "-", "_", ".", "").Replace(strings.ToLower(strings.TrimSpace(name)))
	in := func(s string) bool {
		for _, a := range allowed {
			if a == s {
				return true
			}
		}
		return false
	}
	if in(key) {
		return key
	}
	if a := speciesAliases[key]; a != "" {
		if in(a) {
			return a
		}
		return ""
	}
	return Nearest(name, allowed)
}

// SpeciesSynonyms lists the names a caller may write for a row in other
// words (rhesus for monkey): the suggestions SpeciesSuggestion gives, sorted.
func SpeciesSynonyms(row string) []string {
	var out []string
	for k, v := range speciesAliases {
		if v == row {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// ParseSpecies checks the species name at path, refusing a name outside the
// table with unknown_species (Allowed lists the names; "Rat" and "cynomolgus"
// get a suggestion).
func ParseSpecies(path, name string) (SpeciesInfo, *Problem) {
	if s, ok := Species(name); ok {
		return s, nil
	}
	names := make([]string, len(species))
	for i, s := range species {
		names[i] = s.Name
	}
	return SpeciesInfo{}, refuseTerm(path, CodeUnknownSpecies, "species", name, names, speciesAliases)
}
