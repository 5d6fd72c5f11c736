package chem

import (
	"errors"
	"testing"
)

func TestCheckSMILESAcceptsTheGrammar(t *testing.T) {
	for s, heavy := range map[string]int{
		"C":                                1,
		"CC(=O)Oc1ccccc1C(=O)O":            13, // aspirin
		"CN1C=NC2=C1C(=O)N(C(=O)N2C)C":     14, // caffeine
		"[NH4+].[Cl-]":                     2,
		"C[C@@H](N)C(=O)O":                 6,
		"[2H]C([2H])([2H])Cl":              2,
		"c1ccc2c(c1)cccc2":                 10,
		"C%10CCCCC%10":                     6,
		"F/C=C/F":                          4,
		"[O-][n+]1ccccc1":                  7,
		"COc1cc2ncnc(Nc3cccc(Cl)c3F)c2cc1": 21,
		"[Fe+2]":                           1,
		"C1CC[C@@]2(CC1)OCCO2":             10,
		"[13CH4]":                          1,
		"*c1ccccc1":                        7,
		"C=1CCCCC1":                        6,
		"[Co@OH1](F)(Cl)(Br)(I)(O)N":       7,
		"N#N":                              2,
		"[H][H]":                           0,
		"OC(=O)CC(O)(CC(=O)O)C(=O)O":       13,
	} {
		sum, err := CheckSMILES(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if sum.HeavyAtoms != heavy {
			t.Errorf("%s: %d heavy atoms, want %d", s, sum.HeavyAtoms, heavy)
		}
	}
}

func TestCheckSMILESRefusesBrokenSyntax(t *testing.T) {
	for s, pos := range map[string]int{
		"":           0,
		"C1CC":       1, // ring 1 never closed
		"CC(C":       2, // branch never closed
		"CC)C":       2, // ')' without '('
		"C[NH3+":     1, // bracket never closed
		"C[Xx]":      1, // unknown element
		"Cx":         1, // x is no atom
		"(C)C":       0, // branch before any atom
		"C()C":       2, // empty branch
		"C==C":       2, // two bonds
		"CC=":        2, // ends with a bond
		"C..C":       2, // empty component
		"C11":        2, // ring closes on itself
		"C=1CC-1":    6, // conflicting ring bonds
		"c1ccccc1%1": 8, // % needs two digits
		"C[C@XY]":    1, // bad chirality
		"[CH4+++]":   0, // charge: +++ is not a charge
		"Na":         1, // a is not organic (Na needs brackets)
		"C C":        1, // whitespace
		"C<script>":  1,
	} {
		_, err := CheckSMILES(s)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: accepted (%v)", s, err)
			continue
		}
		if se.Pos != pos {
			t.Errorf("%q: error at %d, want %d: %v", s, se.Pos, pos, se)
		}
	}
}

func TestCheckSMARTSForCores(t *testing.T) {
	for _, s := range []string{"c1ccc2ncncc2c1", "[#6]~[#7]", "c1ccc([*:1])cc1", "[c,n]1ccccc1", "[#6;R]!@[#7]"} {
		if _, err := CheckSMARTS(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"[$(C=O)]C", "c1ccc", "[#6<]"} {
		if _, err := CheckSMARTS(s); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
}
