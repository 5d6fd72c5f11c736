package tox

// Study is one animal toxicology study's result, in canonical units: the
// caller (the skill's JSON wrapper) has already converted quantities with
// units to mg/kg and kg.
type Study struct {
	// Species is a Table 1 animal ("rat", "dog", ...; see AllowedSpecies),
	// or SpeciesOther for a species not in the table, which only the
	// body_weight route accepts.
	Species string `json:"species"`
	// NOAEL is the no observed adverse effect level in mg/kg. Required and
	// positive; a pointer so that a missing value is told apart from zero.
	NOAEL *float64 `json:"noael"`
	// NOAELMgPerM2 is the NOAEL given per body surface area instead (mg/m²):
	// the NOAEL in mg/kg is NOAELMgPerM2 / km of the species' Table 1 row
	// (dose in mg/m² = km × dose in mg/kg). Exactly one of NOAEL and
	// NOAELMgPerM2 is set.
	NOAELMgPerM2 *float64 `json:"noael_mg_per_m2,omitempty"`
	// BodyWeightKg is the animals' body weight in kg. Required by the
	// body_weight route; optional for divide_by and km_ratio, which refuse
	// a weight outside the table's range (see WeightRange).
	BodyWeightKg *float64 `json:"body_weight_kg,omitempty"`
}

// Input is a projection request.
type Input struct {
	// Studies are the animal studies, at least one, at most MaxStudies.
	Studies []Study `json:"studies"`
	// Route is how an animal dose becomes a human equivalent dose:
	// RouteDivideBy, RouteKmRatio or RouteBodyWeight. Required: the routes
	// disagree by a few percent, so the caller chooses and the output names it.
	Route string `json:"route"`
	// SafetyFactor divides the HED. Nil means DefaultSafetyFactor (10). A
	// value below 10 needs SafetyFactorReason and is flagged in the warnings;
	// below 1 is refused; above 10 is allowed.
	SafetyFactor *float64 `json:"safety_factor,omitempty"`
	// SafetyFactorReason justifies a safety factor below 10.
	SafetyFactorReason string `json:"safety_factor_reason,omitempty"`
	// HumanWeightKg is the adult's weight for the dose in mg and the
	// body_weight route's W_human. Zero means Table 1's human_adult
	// reference weight (60 kg).
	HumanWeightKg float64 `json:"human_weight_kg,omitempty"`
	// Species, when set, forces the species the MRSD is based on (it must
	// be among the studies); otherwise the most sensitive species (lowest
	// HED) is used.
	Species string `json:"species,omitempty"`
	// Article, when set, describes the test article, so that the guidance's
	// exception for proteins over 100 kDa given intravascularly applies (see
	// RouteMgPerKg).
	Article *Article `json:"test_article,omitempty"`
}

// SpeciesOther names a species that is not in Table 1.
const SpeciesOther = "other"

// MaxStudies bounds the studies in one request; a real submission has a
// handful.
const MaxStudies = 100

// AllowedSpecies lists the species a study may name: Table 1's animals in
// table order, then SpeciesOther.
func AllowedSpecies() []string {
	return append(defaultTable.animalSpecies(), SpeciesOther)
}
