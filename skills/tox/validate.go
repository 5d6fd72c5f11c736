package tox

import (
	"fmt"
	"math"
	"strings"

	"github.com/scidex/substrate/skills/problem"
	"github.com/scidex/substrate/skills/units"
)

// validate returns every problem with in, checked against t. Checks that
// depend on another field (a weight range needs a known species and route)
// run only when that field is valid, so one mistake is reported once.
func validate(t *table, in Input) problem.List {
	var ps problem.List
	allowed := strings.Join(append(t.animalSpecies(), SpeciesOther), ", ")

	routeOK := false
	switch {
	case in.Route == "":
		ps.Add("inputs.route", CodeRequired, nil, "a route is required: one of %s", strings.Join(Routes(), ", "))
	case !knownRoute(in.Route):
		ps.Add("inputs.route", CodeUnknownRoute, in.Route, "route %q is not known: use one of %s", in.Route, strings.Join(Routes(), ", "))
	default:
		routeOK = true
	}

	human, _ := t.row(HumanAdult)
	humanKg := human.RefBodyWeightKg
	switch w := in.HumanWeightKg; {
	case math.IsNaN(w) || math.IsInf(w, 0):
		ps.Add("inputs.human_weight_kg", CodeNotFinite, nil, "human weight %v kg is not a finite number", w)
	case w < 0:
		ps.Add("inputs.human_weight_kg", CodeNotPositive, w, "human weight %g kg must be positive (or omitted for %g kg)", w, humanKg)
	case w > 0:
		if routeOK && usesTableFactors(in.Route) && !inWeightRange(w, humanKg) {
			lo, hi := WeightRange(humanKg)
			ps.Add("inputs.human_weight_kg", CodeHumanWeightOutsideTable, w,
				"human weight %g kg is outside %.3g–%.3g kg, where route %s's factors (for a %g kg adult) stay within %g%% of the body-weight formula: use route %s",
				w, lo, hi, in.Route, humanKg, WeightTolerance*100, RouteBodyWeight)
		}
	}

	switch n := len(in.Studies); {
	case n == 0:
		ps.Add("inputs.studies", CodeRequired, nil, "at least one study is required")
	case n > MaxStudies:
		ps.Add("inputs.studies", CodeTooManyStudies, n, "%d studies, at most %d are accepted", n, MaxStudies)
		return ps
	}
	for i, s := range in.Studies {
		p := fmt.Sprintf("inputs.studies[%d]", i)
		row, inTable := t.row(s.Species)
		speciesOK := false
		switch {
		case s.Species == "":
			ps.Add(p+".species", CodeRequired, nil, "a species is required: one of %s", allowed)
		case s.Species == SpeciesOther:
			speciesOK = true
			if routeOK && usesTableFactors(in.Route) {
				ps.Add(p+".species", CodeRouteNeedsTableSpecies, s.Species,
					"species %q has no Table 1 factor for route %s: use route %s with the animals' body weight", s.Species, in.Route, RouteBodyWeight)
			}
		case !inTable || strings.HasPrefix(s.Species, "human_"):
			ps.Add(p+".species", CodeUnknownSpecies, s.Species, "species %q is not a Table 1 name: use one of %s", s.Species, allowed)
			ps.Suggest(units.SpeciesSuggestion(s.Species, append(t.animalSpecies(), SpeciesOther)))
		default:
			speciesOK = true
		}

		switch {
		case s.NOAEL != nil && s.NOAELMgPerM2 != nil:
			ps.Add(p+".noael", CodeNOAELTwice, nil, "the NOAEL is given both in mg/kg and in mg/m²: give one")
		case s.NOAELMgPerM2 != nil:
			switch v := *s.NOAELMgPerM2; {
			case math.IsNaN(v) || math.IsInf(v, 0):
				ps.Add(p+".noael", CodeNotFinite, nil, "NOAEL %v mg/m² is not a finite number", v)
			case v <= 0:
				ps.Add(p+".noael", CodeNotPositive, v, "NOAEL %g mg/m² must be positive", v)
			case s.Species == SpeciesOther:
				ps.Add(p+".noael", CodeNOAELPerAreaNeedsKm, v,
					"NOAEL %g mg/m² needs the species' km to become mg/kg, and species %q has no Table 1 row: give the NOAEL in mg/kg", v, SpeciesOther)
			}
		case s.NOAEL == nil:
			ps.Add(p+".noael", CodeRequired, nil, "the NOAEL (mg/kg or mg/m²) is required")
		case math.IsNaN(*s.NOAEL) || math.IsInf(*s.NOAEL, 0):
			ps.Add(p+".noael", CodeNotFinite, nil, "NOAEL %v mg/kg is not a finite number", *s.NOAEL)
		case *s.NOAEL <= 0:
			ps.Add(p+".noael", CodeNotPositive, *s.NOAEL, "NOAEL %g mg/kg must be positive", *s.NOAEL)
		}

		switch w := s.BodyWeightKg; {
		case w == nil:
			if in.Route == RouteBodyWeight {
				ps.Add(p+".body_weight_kg", CodeBodyWeightRequired, nil, "route %s needs the animals' body weight (kg)", RouteBodyWeight)
			}
		case math.IsNaN(*w) || math.IsInf(*w, 0):
			ps.Add(p+".body_weight_kg", CodeNotFinite, nil, "body weight %v kg is not a finite number", *w)
		case *w <= 0:
			ps.Add(p+".body_weight_kg", CodeNotPositive, *w, "body weight %g kg must be positive", *w)
		case routeOK && speciesOK && inTable && usesTableFactors(in.Route) && !inWeightRange(*w, row.RefBodyWeightKg):
			lo, hi := WeightRange(row.RefBodyWeightKg)
			ps.Add(p+".body_weight_kg", CodeBodyWeightOutsideTable, *w,
				"%s at %g kg is outside %.3g–%.3g kg, where Table 1's factor (reference %g kg) stays within %g%% of the body-weight formula: use route %s",
				s.Species, *w, lo, hi, row.RefBodyWeightKg, WeightTolerance*100, RouteBodyWeight)
		}
	}

	validateArticle(&ps, in, routeOK)

	if in.Species != "" {
		found := false
		for _, s := range in.Studies {
			found = found || s.Species == in.Species
		}
		if !found {
			var have []string
			for _, s := range in.Studies {
				have = append(have, s.Species)
			}
			ps.Add("inputs.species", CodeSpeciesNotInStudies, in.Species, "species %q is not among the studies (%s)", in.Species, strings.Join(have, ", "))
		}
	}

	if sf := in.SafetyFactor; sf != nil {
		switch {
		case math.IsNaN(*sf) || math.IsInf(*sf, 0):
			ps.Add("inputs.safety_factor", CodeNotFinite, nil, "safety factor %v is not a finite number", *sf)
		case *sf < 1:
			ps.Add("inputs.safety_factor", CodeSafetyFactorBelowOne, *sf, "safety factor %g is below 1, which would raise the dose above the HED", *sf)
		case *sf < DefaultSafetyFactor && strings.TrimSpace(in.SafetyFactorReason) == "":
			ps.Add("inputs.safety_factor_reason", CodeSafetyFactorReasonRequired, nil,
				"safety factor %g is below the default %g: state the reason in safety_factor_reason", *sf, DefaultSafetyFactor)
		}
	}
	return ps
}
