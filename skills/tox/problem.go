package tox

import "strings"

// Problem is one reason an input was refused: where (a JSON path under
// "inputs", e.g. "inputs.studies[1].noael"), a snake_case code a program can
// branch on, and a message for a person that names the value and what is
// expected.
type Problem struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Problems is the error Project returns for bad input: every problem found,
// in input order. Nothing is computed when there is one.
type Problems []Problem

// Error joins the problems as "path: message (code)".
func (ps Problems) Error() string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Path + ": " + p.Message + " (" + p.Code + ")")
	}
	return b.String()
}

// Problem codes.
const (
	CodeRequired                   = "required"
	CodeNotPositive                = "not_positive"
	CodeNotFinite                  = "not_finite"
	CodeUnknownSpecies             = "unknown_species"
	CodeUnknownRoute               = "unknown_route"
	CodeSpeciesNotInStudies        = "species_not_in_studies"
	CodeSafetyFactorReasonRequired = "safety_factor_reason_required"
	CodeSafetyFactorBelowOne       = "safety_factor_below_one"
	CodeBodyWeightRequired         = "body_weight_required"
	CodeBodyWeightOutsideTable     = "body_weight_outside_table"
	CodeHumanWeightOutsideTable    = "human_weight_outside_table"
	CodeRouteNeedsTableSpecies     = "route_needs_table_species"
	CodeTooManyStudies             = "too_many_studies"
)
