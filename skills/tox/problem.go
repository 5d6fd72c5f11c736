package tox

// procedure is empty: the *problem.Error Project returns for bad input is
// the problems alone, with no prefix, as it has always been; each path is
// already rooted at "inputs".
const procedure = ""

// Problem codes. Each [problem.Problem] names the JSON path under "inputs"
// (for example "inputs.studies[1].noael"), one of these codes, and a message
// for a person that names the value and what is expected.
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
	CodeUnknownModality            = "unknown_modality"
	CodeRouteNotForArticle         = "route_not_for_article"
	CodeNOAELTwice                 = "noael_twice"
	CodeNOAELPerAreaNeedsKm        = "noael_per_area_needs_km"
)
