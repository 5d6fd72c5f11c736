package tox

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scidex/substrate/skills/problem"
)

func rat(noael float64) Study { return Study{Species: "rat", NOAEL: f(noael)} }

// Bad input is refused with the field's path and a code, every problem at
// once, and nothing is computed.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name      string
		in        Input
		path      string
		code      string
		inMessage string
	}{
		{"no studies", Input{Route: RouteKmRatio}, "inputs.studies", CodeRequired, "at least one"},
		{"too many studies", Input{Route: RouteKmRatio, Studies: make([]Study, MaxStudies+1)}, "inputs.studies", CodeTooManyStudies, "101"},
		{"missing NOAEL", Input{Route: RouteKmRatio, Studies: []Study{{Species: "rat"}}}, "inputs.studies[0].noael", CodeRequired, "NOAEL"},
		{"zero NOAEL", Input{Route: RouteKmRatio, Studies: []Study{rat(0)}}, "inputs.studies[0].noael", CodeNotPositive, "0 mg/kg"},
		{"negative NOAEL", Input{Route: RouteKmRatio, Studies: []Study{rat(-5)}}, "inputs.studies[0].noael", CodeNotPositive, "-5"},
		{"NaN NOAEL", Input{Route: RouteKmRatio, Studies: []Study{rat(math.NaN())}}, "inputs.studies[0].noael", CodeNotFinite, "NaN"},
		{"infinite NOAEL", Input{Route: RouteKmRatio, Studies: []Study{rat(math.Inf(1))}}, "inputs.studies[0].noael", CodeNotFinite, "Inf"},
		{"missing species", Input{Route: RouteKmRatio, Studies: []Study{{NOAEL: f(1)}}}, "inputs.studies[0].species", CodeRequired, "guinea_pig"},
		{"unknown species", Input{Route: RouteKmRatio, Studies: []Study{rat(1), {Species: "Rat", NOAEL: f(1)}}}, "inputs.studies[1].species", CodeUnknownSpecies, "mouse, hamster, rat"},
		{"human is not an animal", Input{Route: RouteKmRatio, Studies: []Study{{Species: "human_adult", NOAEL: f(1)}}}, "inputs.studies[0].species", CodeUnknownSpecies, "mini_pig, other"},
		{"no route", Input{Studies: []Study{rat(1)}}, "inputs.route", CodeRequired, "divide_by, km_ratio, body_weight"},
		{"unknown route", Input{Route: "allometric", Studies: []Study{rat(1)}}, "inputs.route", CodeUnknownRoute, "divide_by, km_ratio, body_weight"},
		{"safety factor below 10 without reason", Input{Route: RouteKmRatio, Studies: []Study{rat(1)}, SafetyFactor: f(5)}, "inputs.safety_factor_reason", CodeSafetyFactorReasonRequired, "below the default 10"},
		{"blank reason", Input{Route: RouteKmRatio, Studies: []Study{rat(1)}, SafetyFactor: f(5), SafetyFactorReason: "  "}, "inputs.safety_factor_reason", CodeSafetyFactorReasonRequired, "5"},
		{"safety factor below 1", Input{Route: RouteKmRatio, Studies: []Study{rat(1)}, SafetyFactor: f(0.5), SafetyFactorReason: "well known class"}, "inputs.safety_factor", CodeSafetyFactorBelowOne, "below 1"},
		{"safety factor NaN", Input{Route: RouteKmRatio, Studies: []Study{rat(1)}, SafetyFactor: f(math.NaN())}, "inputs.safety_factor", CodeNotFinite, "NaN"},
		{"body weight missing for body_weight", Input{Route: RouteBodyWeight, Studies: []Study{rat(18)}}, "inputs.studies[0].body_weight_kg", CodeBodyWeightRequired, "body_weight"},
		{"body weight zero", Input{Route: RouteBodyWeight, Studies: []Study{{Species: "rat", NOAEL: f(1), BodyWeightKg: f(0)}}}, "inputs.studies[0].body_weight_kg", CodeNotPositive, "0 kg"},
		{"body weight outside table for km_ratio", Input{Route: RouteKmRatio, Studies: []Study{{Species: "rat", NOAEL: f(1), BodyWeightKg: f(0.5)}}}, "inputs.studies[0].body_weight_kg", CodeBodyWeightOutsideTable, "use route body_weight"},
		{"body weight outside table for divide_by", Input{Route: RouteDivideBy, Studies: []Study{{Species: "dog", NOAEL: f(1), BodyWeightKg: f(4)}}}, "inputs.studies[0].body_weight_kg", CodeBodyWeightOutsideTable, "5.09–17.4 kg"},
		{"other species needs body_weight", Input{Route: RouteDivideBy, Studies: []Study{{Species: SpeciesOther, NOAEL: f(1), BodyWeightKg: f(70)}}}, "inputs.studies[0].species", CodeRouteNeedsTableSpecies, "body_weight"},
		{"human weight negative", Input{Route: RouteKmRatio, Studies: []Study{rat(1)}, HumanWeightKg: -60}, "inputs.human_weight_kg", CodeNotPositive, "-60"},
		{"human weight outside table", Input{Route: RouteKmRatio, Studies: []Study{rat(1)}, HumanWeightKg: 120}, "inputs.human_weight_kg", CodeHumanWeightOutsideTable, "body_weight"},
		{"forced species not studied", Input{Route: RouteKmRatio, Studies: []Study{rat(1)}, Species: "dog"}, "inputs.species", CodeSpeciesNotInStudies, "(rat)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Project(c.in)
			if res != nil {
				t.Fatalf("computed %+v on bad input", res)
			}
			var pe *problem.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *problem.Error", err)
			}
			for _, p := range pe.Problems {
				if p.Path == c.path && p.Code == c.code {
					if !strings.Contains(p.Message, c.inMessage) {
						t.Fatalf("message %q does not mention %q", p.Message, c.inMessage)
					}
					return
				}
			}
			t.Fatalf("problems %v, want %s at %s", err, c.code, c.path)
		})
	}
}

// All problems are reported at once, each once.
func TestRefusalsTogether(t *testing.T) {
	_, err := Project(Input{
		Route:        "bogus",
		Studies:      []Study{{Species: "unicorn"}, {Species: "dog", NOAEL: f(-1)}},
		SafetyFactor: f(3),
	})
	var pe *problem.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v", err)
	}
	want := []string{
		"inputs.route unknown_route",
		"inputs.studies[0].species unknown_species",
		"inputs.studies[0].noael required",
		"inputs.studies[1].noael not_positive",
		"inputs.safety_factor_reason safety_factor_reason_required",
	}
	var got []string
	for _, p := range pe.Problems {
		got = append(got, p.Path+" "+p.Code)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.HasPrefix(err.Error(), "inputs.route: route \"bogus\" is not known") { // no prefix before the problems
		t.Fatalf("error text %q", err.Error())
	}
}

// The range that decides "outside the table": (W / W_ref)^0.33 within
// [0.8, 1.2], i.e. W within [0.8^(1/0.33), 1.2^(1/0.33)] × W_ref =
// [0.50855, 1.73757] × W_ref. For the rat (0.15 kg): 0.07628–0.26064 kg.
func TestWeightRange(t *testing.T) {
	lo, hi := WeightRange(0.15)
	if !near(lo, 0.0762824, 1e-5) || !near(hi, 0.2606360, 1e-5) {
		t.Fatalf("rat range %v–%v kg, want 0.07628–0.26064", lo, hi)
	}
	ok := func(w float64) bool {
		_, err := Project(Input{Route: RouteKmRatio, Studies: []Study{{Species: "rat", NOAEL: f(1), BodyWeightKg: f(w)}}})
		return err == nil
	}
	if !ok(0.077) || !ok(0.26) || !ok(0.15) || ok(0.075) || ok(0.27) {
		t.Fatalf("range edges: 0.077 %v, 0.26 %v, 0.15 %v, 0.075 %v, 0.27 %v", ok(0.077), ok(0.26), ok(0.15), ok(0.075), ok(0.27))
	}
	// The body_weight route takes any weight.
	if _, err := Project(Input{Route: RouteBodyWeight, Studies: []Study{{Species: "rat", NOAEL: f(1), BodyWeightKg: f(0.5)}}}); err != nil {
		t.Fatal(err)
	}
}
