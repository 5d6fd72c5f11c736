package units

import (
	"fmt"
	"math/big"
	"sort"
)

// Unit is one whitelisted UCUM unit, as spelled. Units are values: two Units
// are == when spelled the same; [Unit.Equivalent] compares what they measure
// (mL and ml are equivalent, mg.h/L and h.mg/L too).
type Unit struct {
	// Symbol is the UCUM case-sensitive symbol as accepted ("ml", "mg.h/L").
	Symbol string
	// Dimension is what the unit measures.
	Dimension Dimension
	// preferred is the spelling Units lists and suggestions offer: L rather
	// than l, the time first in a product (h.mg/L), 1/h rather than /h.
	preferred string
	// num/den is the size of one Symbol in the dimension's canonical unit
	// (ug: 1/1000 of a mg). Every factor of the whitelist fits int64; init
	// checks it.
	num, den int64
}

// Preferred returns the preferred spelling of the same unit (L for l,
// h.mg/L for mg.h/L).
func (u Unit) Preferred() string { return u.preferred }

// Factor returns the exact size of one u in its dimension's canonical unit,
// as a new big.Rat the caller may modify.
func (u Unit) Factor() *big.Rat { return big.NewRat(u.num, u.den) }

// Equivalent reports whether u and v are the same unit, however spelled.
func (u Unit) Equivalent(v Unit) bool {
	return u.Dimension == v.Dimension && u.num == v.num && u.den == v.den && u.den != 0
}

// String returns the symbol.
func (u Unit) String() string { return u.Symbol }

// table holds every accepted spelling; byDim the same units per dimension,
// sorted by size then spelling. They are package variables initialised by
// buildTable, so Go orders them before anything that uses them (the species
// table), and never change afterwards.
var table, byDim = buildTable()

// Lookup finds a unit by its exact, case-sensitive UCUM symbol. It does not
// guess: "MG", "hr" and "µg" are not found (ParseQuantity suggests the right
// spelling for those).
func Lookup(symbol string) (Unit, bool) {
	u, ok := table[symbol]
	return u, ok
}

// Units lists the units of a dimension in their preferred spellings, from
// the smallest to the largest.
func Units(d Dimension) []Unit {
	var out []Unit
	for _, u := range byDim[d] {
		if u.Symbol == u.preferred {
			out = append(out, u)
		}
	}
	return out
}

// Symbols lists every accepted spelling of every unit of a dimension
// (ml as well as mL, mg.h/L as well as h.mg/L), from the smallest unit to
// the largest.
func Symbols(d Dimension) []string {
	out := make([]string, 0, len(byDim[d]))
	for _, u := range byDim[d] {
		out = append(out, u.Symbol)
	}
	return out
}

// atom is a simple unit and its size in the canonical unit of its kind; alt
// is a second UCUM spelling (l for L), empty when there is none.
type atom struct {
	sym, alt string
	f        *big.Rat
}

func (a atom) spellings() []string {
	if a.alt == "" {
		return []string{a.sym}
	}
	return []string{a.sym, a.alt}
}

func r(num, den int64) *big.Rat { return big.NewRat(num, den) }

// The atoms. Sizes are exact decimal or sexagesimal ratios: no calendar units
// (mo, a), whose length UCUM defines only on average.
var (
	massAtoms = []atom{
		{"pg", "", r(1, 1e9)}, {"ng", "", r(1, 1e6)}, {"ug", "", r(1, 1e3)},
		{"mg", "", r(1, 1)}, {"g", "", r(1e3, 1)}, {"kg", "", r(1e6, 1)},
	}
	amountAtoms = []atom{
		{"pmol", "", r(1, 1e6)}, {"nmol", "", r(1, 1e3)}, {"umol", "", r(1, 1)},
		{"mmol", "", r(1e3, 1)}, {"mol", "", r(1e6, 1)},
	}
	// UCUM defines the liter twice, as l and as L; both are accepted.
	volumeAtoms = []atom{
		{"uL", "ul", r(1, 1e6)}, {"mL", "ml", r(1, 1e3)}, {"dL", "dl", r(1, 10)}, {"L", "l", r(1, 1)},
	}
	timeAtoms = []atom{
		{"s", "", r(1, 3600)}, {"min", "", r(1, 60)}, {"h", "", r(1, 1)}, {"d", "", r(24, 1)}, {"wk", "", r(168, 1)},
	}
	areaAtoms = []atom{{"cm2", "", r(1, 1e4)}, {"m2", "", r(1, 1)}}
)

func mul(a, b *big.Rat) *big.Rat { return new(big.Rat).Mul(a, b) }
func quo(a, b *big.Rat) *big.Rat { return new(big.Rat).Quo(a, b) }

type builder map[string]Unit

func (table builder) add(symbol, preferred string, d Dimension, f *big.Rat) {
	if _, dup := table[symbol]; dup {
		panic("units: duplicate symbol " + symbol)
	}
	if !f.Num().IsInt64() || !f.Denom().IsInt64() {
		panic(fmt.Sprintf("units: factor of %s does not fit int64: %s", symbol, f))
	}
	table[symbol] = Unit{Symbol: symbol, Dimension: d, preferred: preferred, num: f.Num().Int64(), den: f.Denom().Int64()}
}

// quotients adds n/d for every atom pair: every spelling of the pair, with
// the first spellings preferred.
func (table builder) quotients(dim Dimension, num, den []atom) {
	for _, n := range num {
		for _, d := range den {
			pref := n.sym + "/" + d.sym
			for _, ns := range n.spellings() {
				for _, ds := range d.spellings() {
					table.add(ns+"/"+ds, pref, dim, quo(n.f, d.f))
				}
			}
		}
	}
}

// products adds t.n/d and n.t/d (UCUM writes a product with "."), t raised
// to power (1 or 2), the time first in the preferred spelling.
func (table builder) products(dim Dimension, power int, num, den []atom) {
	for _, t := range timeAtoms {
		ts, tf := t.sym, t.f
		if power == 2 {
			ts, tf = t.sym+"2", mul(t.f, t.f)
		}
		for _, n := range num {
			for _, d := range den {
				f := quo(mul(tf, n.f), d.f)
				pref := ts + "." + n.sym + "/" + d.sym
				for _, ds := range d.spellings() {
					table.add(ts+"."+n.sym+"/"+ds, pref, dim, f)
					table.add(n.sym+"."+ts+"/"+ds, pref, dim, f)
				}
			}
		}
	}
}

func buildTable() (map[string]Unit, map[Dimension][]Unit) {
	table := builder{}
	for _, set := range []struct {
		d     Dimension
		atoms []atom
	}{{Mass, massAtoms}, {Amount, amountAtoms}, {Volume, volumeAtoms}, {Time, timeAtoms}, {Area, areaAtoms}} {
		for _, a := range set.atoms {
			for _, s := range a.spellings() {
				table.add(s, a.sym, set.d, a.f)
			}
		}
	}
	table.add("1", "1", Fraction, r(1, 1))
	table.add("%", "%", Fraction, r(1, 100))
	for _, t := range timeAtoms {
		table.add("1/"+t.sym, "1/"+t.sym, InverseTime, quo(r(1, 1), t.f))
		table.add("/"+t.sym, "1/"+t.sym, InverseTime, quo(r(1, 1), t.f))
	}
	table.quotients(Concentration, massAtoms, volumeAtoms)
	table.quotients(MolarConcentration, amountAtoms, volumeAtoms)
	// A dose per body mass is per kg, the unit body weights are given in.
	table.quotients(DosePerBodyMass, massAtoms[:5], []atom{{"kg", "", r(1, 1)}})
	table.quotients(DosePerArea, massAtoms[:5], areaAtoms)
	table.quotients(MassRate, massAtoms, timeAtoms)
	table.quotients(VolumeRate, volumeAtoms, timeAtoms)
	kg := []atom{{"kg", "", r(1, 1)}}
	table.quotients(VolumePerBodyMass, volumeAtoms, kg)
	// UCUM divides left to right, so mL/min/kg and mL/kg/min are both
	// mL/(min.kg); the time first is preferred.
	for _, v := range volumeAtoms {
		for _, t := range timeAtoms {
			pref := v.sym + "/" + t.sym + "/kg"
			for _, vs := range v.spellings() {
				table.add(vs+"/"+t.sym+"/kg", pref, VolumeRatePerBodyMass, quo(v.f, t.f))
				table.add(vs+"/kg/"+t.sym, pref, VolumeRatePerBodyMass, quo(v.f, t.f))
			}
		}
	}
	// A molecular weight: g/mol (numerically daltons) and kg/mol (kDa).
	table.quotients(MolarMass, []atom{{"g", "", r(1, 1)}, {"kg", "", r(1000, 1)}}, []atom{{"mol", "", r(1, 1)}})
	table.products(ConcentrationTime, 1, massAtoms, volumeAtoms)
	table.products(MolarConcentrationTime, 1, amountAtoms, volumeAtoms)
	table.products(ConcentrationTimeSquared, 2, massAtoms, volumeAtoms)
	table.products(MolarConcentrationTimeSquared, 2, amountAtoms, volumeAtoms)

	byDim := map[Dimension][]Unit{}
	for _, u := range table {
		byDim[u.Dimension] = append(byDim[u.Dimension], u)
	}
	for d, us := range byDim {
		sort.Slice(us, func(i, j int) bool {
			c := u2r(us[i]).Cmp(u2r(us[j]))
			if c != 0 {
				return c < 0
			}
			return us[i].Symbol < us[j].Symbol
		})
		byDim[d] = us
	}
	return table, byDim
}

func u2r(u Unit) *big.Rat { return big.NewRat(u.num, u.den) }
