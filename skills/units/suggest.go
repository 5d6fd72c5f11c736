package units

import (
	"strings"
	"unicode/utf8"
)

// examples are the units a message offers for each dimension: the canonical
// unit first, then the common ones.
var examples = map[Dimension][]string{
	Mass:                          {"mg", "ug", "ng", "g", "kg"},
	Amount:                        {"umol", "nmol", "mmol", "mol"},
	Volume:                        {"L", "mL", "uL", "dL"},
	Time:                          {"h", "min", "s", "d", "wk"},
	Area:                          {"m2", "cm2"},
	Fraction:                      {"1", "%"},
	InverseTime:                   {"1/h", "1/min", "1/d"},
	Concentration:                 {"mg/L", "ng/mL", "ug/mL", "ug/L", "mg/dL"},
	MolarConcentration:            {"umol/L", "nmol/L", "mmol/L"},
	DosePerBodyMass:               {"mg/kg", "ug/kg", "g/kg"},
	DosePerArea:                   {"mg/m2", "ug/m2"},
	MassRate:                      {"mg/h", "mg/min", "ug/min", "mg/d"},
	VolumeRate:                    {"L/h", "mL/min", "mL/h"},
	VolumePerBodyMass:             {"L/kg", "mL/kg"},
	VolumeRatePerBodyMass:         {"L/h/kg", "mL/min/kg", "mL/h/kg"},
	ConcentrationTime:             {"h.mg/L", "h.ng/mL", "h.ug/mL", "min.ug/mL"},
	MolarConcentrationTime:        {"h.umol/L", "h.nmol/L"},
	ConcentrationTimeSquared:      {"h2.mg/L", "h2.ng/mL"},
	MolarConcentrationTimeSquared: {"h2.umol/L", "h2.nmol/L"},
	MolarMass:                     {"g/mol", "kg/mol"},
}

// expected says what a field wants: "a unit of mass such as mg, ug, ng, g, kg".
func expected(want []Dimension) string {
	if len(want) == 0 {
		return "a whitelisted UCUM unit such as mg, mL, h, mg/L, mg/kg"
	}
	parts := make([]string, len(want))
	for i, d := range want {
		parts[i] = d.describe() + " (" + strings.Join(examples[d], ", ") + ")"
	}
	return "a unit of " + strings.Join(parts, " or ")
}

// tokenAliases maps a lower-cased unit word people write to its UCUM symbol.
// Only suggestions use it: the parser never accepts these.
var tokenAliases = map[string]string{
	"hr": "h", "hrs": "h", "hour": "h", "hours": "h",
	"sec": "s", "secs": "s", "second": "s", "seconds": "s",
	"mins": "min", "minute": "min", "minutes": "min",
	"day": "d", "days": "d",
	"w": "wk", "wks": "wk", "week": "wk", "weeks": "wk",
	"mcg": "ug", "microgram": "ug", "micrograms": "ug",
	"gm": "g", "gms": "g", "gram": "g", "grams": "g",
	"mgs": "mg", "milligram": "mg", "milligrams": "mg",
	"ngs": "ng", "nanogram": "ng", "nanograms": "ng",
	"kgs": "kg", "kilogram": "kg", "kilograms": "kg",
	"cc": "mL", "ltr": "L", "lt": "L", "liter": "L", "liters": "L", "litre": "L", "litres": "L",
	"milliliter": "mL", "milliliters": "mL", "millilitre": "mL", "millilitres": "mL",
	"mcl": "uL", "mcmol": "umol", "mole": "mol", "moles": "mol",
	"percent": "%", "pct": "%",
	"da": "g/mol", "dalton": "g/mol", "daltons": "g/mol", "kda": "kg/mol", "kilodalton": "kg/mol", "kilodaltons": "kg/mol",
}

// molarAliases are the chemists' molar units, case mattering (mM is not MM).
var molarAliases = map[string]string{
	"M": "mol/L", "mM": "mmol/L", "uM": "umol/L", "nM": "nmol/L", "pM": "pmol/L",
}

// folded maps a lower-cased symbol to the preferred spelling of the one unit
// it folds to; a fold shared by two different units is dropped (none is in
// the whitelist today, a test checks it).
var folded = buildFolded()

func buildFolded() map[string]string {
	folded := map[string]string{}
	clash := map[string]bool{}
	for s, u := range table {
		k := strings.ToLower(s)
		if prev, ok := folded[k]; ok && prev != u.preferred {
			clash[k] = true
		}
		folded[k] = u.preferred
	}
	for k := range clash {
		delete(folded, k)
	}
	return folded
}

// suggest returns a whitelisted symbol of a wanted dimension near s, or "".
// It tries, in order: spelling fixes (µ for u, * or · for ., ^ and ² for
// powers, spaces), unit words (hr, mcg, cc), molar shorthands (uM), case
// (MG → mg), and finally one edit (mgg → mg) when exactly one unit is that
// close.
func suggest(s string, want []Dimension) string {
	if len(s) > 64 {
		return ""
	}
	ok := func(sym string) bool {
		u, found := Lookup(sym)
		if !found {
			return false
		}
		if len(want) == 0 {
			return true
		}
		for _, d := range want {
			if u.Dimension == d {
				return true
			}
		}
		return false
	}
	n := normalize(s)
	for _, c := range []string{n, molarAliases[n], aliasTokens(n)} {
		if c != "" && ok(c) {
			return c
		}
	}
	for _, c := range []string{n, aliasTokens(n)} {
		if p, found := folded[strings.ToLower(c)]; found && ok(p) {
			return p
		}
	}
	// One edit away, on the lower-cased spelling, among the wanted units.
	// Two-letter inputs are skipped: ms (millisecond) is not a typo of s.
	target := strings.ToLower(n)
	if utf8.RuneCountInString(target) < 3 {
		return ""
	}
	hit := ""
	for sym, u := range table {
		if sym != u.preferred || !ok(sym) || !oneEdit(target, strings.ToLower(sym)) {
			continue
		}
		if hit != "" && hit != sym {
			return ""
		}
		hit = sym
	}
	return hit
}

// normalize fixes spellings that are not UCUM but mean one thing.
func normalize(s string) string {
	r := strings.NewReplacer(
		"µ", "u", "μ", "u", // micro sign U+00B5 and Greek mu U+03BC
		"*", ".", "·", ".", "×", ".",
		"^", "", "²", "2", "³", "3",
		" ", "",
	)
	n := r.Replace(strings.TrimSpace(s))
	// h-1 and hr^-1 are per hour.
	if base, ok := strings.CutSuffix(n, "-1"); ok && !strings.ContainsAny(base, "./") {
		n = "1/" + base
	}
	return n
}

// aliasTokens replaces unit words inside a compound symbol (mg/hr → mg/h,
// ng*hr/mL → ng.h/mL), keeping any power digits (hr2 → h2).
func aliasTokens(s string) string {
	var b strings.Builder
	tok := func(t string) {
		base := strings.TrimRight(t, "0123456789")
		if a, ok := tokenAliases[strings.ToLower(base)]; ok && base != "" {
			b.WriteString(a + t[len(base):])
			return
		}
		b.WriteString(t)
	}
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '.' || s[i] == '/' {
			tok(s[start:i])
			b.WriteByte(s[i])
			start = i + 1
		}
	}
	tok(s[start:])
	return b.String()
}

// oneEdit reports whether a and b differ by exactly one insertion, deletion
// or substitution of a rune.
func oneEdit(a, b string) bool {
	if a == b || !utf8.ValidString(a) {
		return false
	}
	ra, rb := []rune(a), []rune(b)
	if len(ra) > len(rb) {
		ra, rb = rb, ra
	}
	if len(rb)-len(ra) > 1 {
		return false
	}
	i := 0
	for i < len(ra) && ra[i] == rb[i] {
		i++
	}
	if len(ra) == len(rb) {
		return string(ra[i+1:]) == string(rb[i+1:])
	}
	return string(ra[i:]) == string(rb[i+1:])
}
