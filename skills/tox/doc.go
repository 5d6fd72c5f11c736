// Package tox implements the skill tox.fih_dose_projection: the maximum
// recommended starting dose (MRSD) for a first-in-human trial in adult
// healthy volunteers, projected from animal NOAELs by the FDA CDER guidance
// of July 2005, "Estimating the Maximum Safe Starting Dose in Initial
// Clinical Trials for Therapeutics in Adult Healthy Volunteers".
//
// It is a pure computation: no database, no units. Inputs arrive in
// canonical units (NOAEL in mg/kg, weights in kg); the skill's JSON wrapper
// converts quantities with units before calling [Project]. Bad input is
// refused with a *[problem.Error] listing every problem, each naming its JSON
// path under "inputs", and nothing is computed.
//
// # The calculation
//
//  1. Per study, the human equivalent dose (HED, mg/kg) by the route the
//     caller names ([RouteDivideBy], [RouteKmRatio], [RouteBodyWeight]).
//     There is no default route: the three disagree (rat 10 mg/kg gives
//     1.613 by divide-by and 1.622 by km ratio; the body-weight formula at a
//     reference weight is up to 17% off the km ratio), so the caller picks
//     and the output names it.
//  2. The study the MRSD rests on: the lowest HED (the most sensitive
//     species), unless the caller forces a species among the studies.
//  3. MRSD = HED / safety factor (10 unless given; below 10 needs a reason
//     and is flagged; below 1 is refused), in mg/kg and in mg for the adult's
//     weight (60 kg unless given).
//
// # Where the constants come from
//
// Table 1 (reference weights, km, divide-by factors) is read, through skills/units, from
// fda2005_table1.csv, gathered from secondary sources because the guidance
// itself could not be retrieved; each row carries its status (verified |
// to_verify) and a result lists the rows it used with their statuses. The
// default safety factor 10 and the body-weight exponent 0.33 are the
// guidance's, as quoted by the data README. The guidance document's URL and
// hash are to_verify ([GuidanceStatus]).
//
// One rule is this package's own decision, not the guidance's: a weight
// counts as "outside the table" when the body-weight formula's correction (W / W_ref)^0.33 leaves
// [0.8, 1.2] ([WeightRange]); divide_by and km_ratio then refuse the study
// and point to body_weight, which takes any weight and also serves species
// not in the table ([SpeciesOther]). Table 1 is understood to give working
// weight ranges, but they are not in the verified reference data, so the
// ranges are derived from this one stated rule (see [WeightTolerance]).
//
// # The guidance's exceptions
//
// A NOAEL may be given per body surface area (mg/m²): it becomes mg/kg by
// the species' km (dose in mg/m² = km × dose in mg/kg, the data README's
// relation), and the study's calculation shows the step. A protein over
// 100 kDa given intravascularly scales by mg/kg, one to one
// ([RouteMgPerKg]); the caller names that route and describes the test
// article ([Article]), and the result's route_reason says why the route
// applies. The rule is the guidance's as secondary sources quote it, and is
// to_verify with the guidance (exception.go says how it is enforced).
//
// # What it does not do
//
// Every result says so in fixed words: it is a projection for a qualified
// person's decision, not a starting dose ([PhraseDecision]), and the
// pharmacologically active dose and MABEL approaches, which the guidance
// asks to consider alongside, are not computed ([PhraseNotComputed]).
package tox
