package tox

import (
	"fmt"
	"strings"
)

// Result is a projection. Doses are in mg/kg unless the name says mg;
// numbers are not rounded (the caller formats them).
type Result struct {
	// Skill and LogicVersion identify the logic that produced the result.
	Skill        string `json:"skill"`
	LogicVersion string `json:"logic_version"`

	// Route is the route used for every study and RouteFormula its formula.
	Route        string `json:"route"`
	RouteFormula string `json:"route_formula"`
	// RouteReason says why the route applies: the caller named it, and for
	// mg_per_kg the guidance's exception the test article meets.
	RouteReason string `json:"route_reason"`

	// Studies holds each study's HED, in input order.
	Studies []StudyResult `json:"studies"`

	// ChosenStudy indexes Studies: the study the MRSD is based on.
	ChosenStudy int `json:"chosen_study"`
	// ChosenSpecies is that study's species and ChoiceReason says why.
	ChosenSpecies string `json:"chosen_species"`
	ChoiceReason  string `json:"choice_reason"`
	// HEDMgPerKg is the chosen study's HED.
	HEDMgPerKg float64 `json:"hed_mg_per_kg"`

	// SafetyFactor is the factor applied (10 unless given);
	// SafetyFactorDefaulted says it was not given.
	SafetyFactor          float64 `json:"safety_factor"`
	SafetyFactorDefaulted bool    `json:"safety_factor_defaulted"`
	SafetyFactorReason    string  `json:"safety_factor_reason,omitempty"`

	// MRSDMgPerKg = HEDMgPerKg / SafetyFactor (FDA 2005, step 4).
	MRSDMgPerKg float64 `json:"mrsd_mg_per_kg"`
	// HumanWeightKg is the weight MRSDMg is for (60 kg unless given).
	HumanWeightKg float64 `json:"human_weight_kg"`
	// MRSDMg = MRSDMgPerKg × HumanWeightKg.
	MRSDMg float64 `json:"mrsd_mg"`

	// TableRows lists the Table 1 rows whose values this result used, with
	// their statuses (a to_verify row also raises a warning).
	TableRows []RowUsed `json:"table_rows"`
	// Warnings flag what a reader must not miss.
	Warnings []Warning `json:"warnings"`

	// The fixed phrases: PhraseDecision, PhraseNotComputed, PhraseCheckedAgainst.
	Decision       string `json:"decision"`
	NotComputed    string `json:"not_computed"`
	CheckedAgainst string `json:"checked_against"`
	// References are the guidance and the table, with their statuses.
	References []Reference `json:"references"`
}

// StudyResult is one study's human equivalent dose.
type StudyResult struct {
	Index        int     `json:"index"`
	Species      string  `json:"species"`
	NOAELMgPerKg float64 `json:"noael_mg_per_kg"`
	// NOAELMgPerM2 is the NOAEL as given, when it was given per body surface
	// area; NOAELMgPerKg is then NOAELMgPerM2 / km.
	NOAELMgPerM2 *float64 `json:"noael_mg_per_m2,omitempty"`
	BodyWeightKg *float64 `json:"body_weight_kg,omitempty"`
	// Factor is HED / NOAEL for this study by the route.
	Factor     float64 `json:"factor"`
	HEDMgPerKg float64 `json:"hed_mg_per_kg"`
	// Calculation is the route's formula with this study's numbers.
	Calculation string `json:"calculation"`
}

// RowUsed is a Table 1 row a result read, the columns read and its status.
type RowUsed struct {
	Species string   `json:"species"`
	Columns []string `json:"columns"`
	Status  string   `json:"status"`
}

// Warning is something a reader must weigh, with a code a program can test.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Warning codes.
const (
	WarnSafetyFactorBelowDefault = "safety_factor_below_default"
	WarnTableRowToVerify         = "table_row_to_verify"
	WarnHumanWeightNotReference  = "human_weight_not_reference"
	WarnSpeciesOutsideTable      = "species_outside_table"
)

// Project computes the maximum recommended starting dose (MRSD) from animal
// NOAELs per FDA 2005: each study's HED by the chosen route (step 2), the
// most sensitive species unless one is forced (step 3), the HED divided by
// the safety factor (step 4), and the MRSD in mg for the human weight. Bad
// input returns a *[problem.Error] and nothing is computed.
func Project(in Input) (*Result, error) { return project(defaultTable, in) }

func project(t *table, in Input) (*Result, error) {
	if err := validate(t, in).Err(procedure); err != nil {
		return nil, err
	}
	human, _ := t.row(HumanAdult)
	res := &Result{
		Skill: SkillName, LogicVersion: LogicVersion,
		Route: in.Route, RouteFormula: routeFormula(in.Route, human),
		HumanWeightKg: in.HumanWeightKg,
		Decision:      PhraseDecision, NotComputed: PhraseNotComputed, CheckedAgainst: PhraseCheckedAgainst,
		References: References(),
		Warnings:   []Warning{},
	}
	res.RouteReason = "route " + in.Route + " named by the caller"
	if applies, why := mgPerKgApplies(in.Article); applies {
		res.RouteReason += "; " + why
	}
	if res.HumanWeightKg == 0 {
		res.HumanWeightKg = human.RefBodyWeightKg
	}

	used := &rowsUsed{}
	for i, s := range in.Studies {
		row, _ := t.row(s.Species)
		var animalKg float64
		if s.BodyWeightKg != nil {
			animalKg = *s.BodyWeightKg
		}
		noael, from := noaelMgPerKg(s, row)
		if s.NOAELMgPerM2 != nil {
			used.add(row, "km")
		}
		h, f, calc := hed(in.Route, noael, row, human, animalKg, res.HumanWeightKg)
		res.Studies = append(res.Studies, StudyResult{
			Index: i, Species: s.Species, NOAELMgPerKg: noael, NOAELMgPerM2: s.NOAELMgPerM2, BodyWeightKg: s.BodyWeightKg,
			Factor: f, HEDMgPerKg: h, Calculation: from + calc,
		})
		switch in.Route {
		case RouteDivideBy:
			used.add(row, "divide_by")
		case RouteKmRatio:
			used.add(row, "km")
			used.add(human, "km")
		}
		if s.BodyWeightKg != nil && usesTableFactors(in.Route) {
			used.add(row, "ref_body_weight_kg") // the range check read it
		}
		if s.Species == SpeciesOther {
			res.Warnings = append(res.Warnings, Warning{WarnSpeciesOutsideTable,
				fmt.Sprintf("study %d: species not in Table 1, HED by the body-weight formula only", i)})
		}
	}
	if in.HumanWeightKg == 0 || usesTableFactors(in.Route) {
		used.add(human, "ref_body_weight_kg")
	}
	if in.HumanWeightKg != 0 && in.HumanWeightKg != human.RefBodyWeightKg && usesTableFactors(in.Route) {
		res.Warnings = append(res.Warnings, Warning{WarnHumanWeightNotReference,
			fmt.Sprintf("route %s's factors are for a %g kg adult; the dose in mg is MRSD (mg/kg) × %g kg", in.Route, human.RefBodyWeightKg, in.HumanWeightKg)})
	}

	res.ChosenStudy, res.ChoiceReason = choose(res.Studies, in.Species)
	res.ChosenSpecies = res.Studies[res.ChosenStudy].Species
	res.HEDMgPerKg = res.Studies[res.ChosenStudy].HEDMgPerKg

	res.SafetyFactor, res.SafetyFactorDefaulted = DefaultSafetyFactor, true
	if in.SafetyFactor != nil {
		res.SafetyFactor, res.SafetyFactorDefaulted = *in.SafetyFactor, false
		res.SafetyFactorReason = strings.TrimSpace(in.SafetyFactorReason)
	}
	if res.SafetyFactor < DefaultSafetyFactor {
		res.Warnings = append(res.Warnings, Warning{WarnSafetyFactorBelowDefault,
			fmt.Sprintf("safety factor %g is below the default %g; reason given: %s", res.SafetyFactor, DefaultSafetyFactor, res.SafetyFactorReason)})
	}
	// FDA 2005 step 4: MRSD = HED / safety factor; in mg for the adult's weight.
	res.MRSDMgPerKg = res.HEDMgPerKg / res.SafetyFactor
	res.MRSDMg = res.MRSDMgPerKg * res.HumanWeightKg

	res.TableRows = used.rows
	for _, r := range used.rows {
		if r.Status != StatusVerified {
			res.Warnings = append(res.Warnings, Warning{WarnTableRowToVerify,
				fmt.Sprintf("Table 1 row %s (%s) is %s: its values are not yet confirmed against the guidance", r.Species, strings.Join(r.Columns, ", "), r.Status)})
		}
	}
	return res, nil
}

// choose picks the study the MRSD is based on: the lowest HED among all
// studies (the most sensitive species, FDA 2005 step 3), or among the
// studies of the forced species. A tie goes to the first study in input
// order, and the reason says so.
func choose(studies []StudyResult, forced string) (int, string) {
	best := -1
	for i, s := range studies {
		if forced != "" && s.Species != forced {
			continue
		}
		if best < 0 || s.HEDMgPerKg < studies[best].HEDMgPerKg {
			best = i
		}
	}
	b := studies[best]
	var others []string
	ties := 0
	for i, s := range studies {
		if i == best {
			continue
		}
		if s.HEDMgPerKg == b.HEDMgPerKg && (forced == "" || s.Species == forced) {
			ties++
		}
		others = append(others, fmt.Sprintf("%s %.4g", s.Species, s.HEDMgPerKg))
	}
	var why string
	if forced != "" {
		why = fmt.Sprintf("species %s chosen by the caller; lowest HED among its studies: study %d, %.4g mg/kg", forced, best, b.HEDMgPerKg)
	} else {
		why = fmt.Sprintf("most sensitive species: lowest HED, study %d (%s) at %.4g mg/kg", best, b.Species, b.HEDMgPerKg)
	}
	if len(others) > 0 {
		why += "; other studies (mg/kg): " + strings.Join(others, ", ")
	}
	if ties > 0 {
		why += "; tied with another study, the first in input order was taken"
	}
	return best, why
}

// routeFormula states the route's formula with the constants it uses.
func routeFormula(route string, human Row) string {
	switch route {
	case RouteDivideBy:
		return "HED (mg/kg) = NOAEL (mg/kg) / divide_by (FDA 2005 Table 1)"
	case RouteKmRatio:
		return fmt.Sprintf("HED (mg/kg) = NOAEL (mg/kg) × km_animal / km_human, km_human = %g (FDA 2005 Table 1)", human.Km)
	case RouteMgPerKg:
		return fmt.Sprintf("HED (mg/kg) = NOAEL (mg/kg), scaling by body weight one to one (FDA 2005's exception for proteins over %g kDa given intravascularly)", ProteinMgPerKgAboveDa/1000)
	default:
		return fmt.Sprintf("HED (mg/kg) = NOAEL (mg/kg) × (W_animal / W_human)^%g (FDA 2005)", BodyWeightExponent)
	}
}

// noaelMgPerKg is a validated study's NOAEL in mg/kg and, for one given in
// mg/m², the conversion that produced it (dose in mg/m² = km × dose in
// mg/kg, so mg/kg = mg/m² / km of the species' row).
func noaelMgPerKg(s Study, row Row) (float64, string) {
	if s.NOAELMgPerM2 == nil {
		return *s.NOAEL, ""
	}
	v := *s.NOAELMgPerM2 / row.Km
	return v, fmt.Sprintf("NOAEL = %g mg/m² / km %g = %g mg/kg; ", *s.NOAELMgPerM2, row.Km, v)
}

// rowsUsed collects the Table 1 rows a result read, once each, in order.
type rowsUsed struct{ rows []RowUsed }

func (u *rowsUsed) add(r Row, column string) {
	if r.Species == "" { // SpeciesOther has no row
		return
	}
	for i := range u.rows {
		if u.rows[i].Species == r.Species {
			for _, c := range u.rows[i].Columns {
				if c == column {
					return
				}
			}
			u.rows[i].Columns = append(u.rows[i].Columns, column)
			return
		}
	}
	u.rows = append(u.rows, RowUsed{Species: r.Species, Columns: []string{column}, Status: r.Status})
}
