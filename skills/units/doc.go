// Package units is the vocabulary layer of the scientific skills: the typed
// inputs a skill accepts, checked before anything is computed.
//
// # Why it exists
//
// A dose of "5" is not a dose: 5 mg and 5 mg/kg differ by the animal's
// weight, 5 ug and 5 mg by a thousand. So a skill never takes a bare number
// where a quantity is meant. Every quantity is a JSON object {"value": 5,
// "unit": "mg"} whose unit is a UCUM symbol from a whitelist, and every field
// is checked against the dimension it must measure; a bad field is refused
// with a [Problem] naming its path (inputs.dose.unit), its code and what was
// expected, before the skill runs.
//
// # Units
//
// The whitelist is closed and listed by [Units] and [Symbols]: mass (pg to
// kg), amount (pmol to mol), volume (uL to L), time (s, min, h, d, wk), body
// surface area (cm2, m2), fraction (1, %), inverse time (1/h, /h, ...), and
// their quotients and products: concentration (ng/mL, mg/L, ...), molar
// concentration (nmol/L, ...), dose per body mass (mg/kg), dose per area
// (mg/m2), mass rate (mg/h), volume rate (L/h, mL/min), volume and volume
// rate per body mass (L/kg, mL/min/kg), and the AUC and AUMC units (h.mg/L,
// mg.h/L, h2.ng/mL, ...); [AUCUnit] and its siblings derive an output's unit
// from its inputs'. See [Dimension] for each dimension's
// canonical unit, the one skills compute in.
//
// Spelling is UCUM's case-sensitive form, and only that. mg is not MG; µg and
// mcg are not UCUM (its symbol is ug) and are refused with the suggestion
// "ug", so that a record holds one spelling for one unit. Where UCUM itself
// has two spellings both are accepted: the liter is l or L (so ml and mL,
// dl and dL), a product may be written in either order (h.mg/L or mg.h/L),
// and the inverse hour is 1/h or /h. [Unit.Preferred] gives the spelling we
// print (L, time first, 1/h). Calendar units (mo, a) are left out: UCUM
// defines them only as averages. Mass and molar concentrations do not
// convert into each other: that needs a molar mass, which a skill must ask
// for explicitly.
//
// # Exact conversion
//
// Each unit's size in its dimension's canonical unit is a rational (ug is
// 1/1000 mg, min is 1/60 h), and a parsed quantity keeps the rational of its
// decimal literal (0.1 is 1/10, not the float nearest it). Conversion
// multiplies rationals and rounds to float64 once, at the end: 1 mg is 1000
// ug and back exactly 1, 90 min is exactly 1.5 h, and a chain of conversions
// drifts by nothing. Accepted magnitudes are 0 and 1e-200 to 1e200, so every
// conversion within a dimension is finite and non-zero.
//
// # Closed vocabularies
//
// Species come from FDA 2005 Table 1 (skills/refdata's fda2005_table1.csv, the build's one copy, parsed once here, with
// each row's reference weight, body surface area, km, divide-by factor and
// verified | to_verify status), see [Species]. Routes of administration
// ([Routes]) and dose forms ([DoseForms]) are closed lists with
// descriptions. A name outside a list is refused with the list.
//
// The package is pure: no I/O beyond the embedded table, no global state
// that changes after init, safe for concurrent use.
package units
