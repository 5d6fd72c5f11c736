package tox

import (
	"errors"
	"strings"
	"testing"

	"github.com/scidex/substrate/skills/problem"
)

// The guidance's own exceptions, worked by hand (Table 1: rat km 6, dog km
// 20, monkey km 12, human km 37; rat divide-by 6.2):
//
//	rat 60 mg/m², km_ratio:   60 / 6 = 10 mg/kg; HED = 10 × 6 / 37 = 60 / 37 = 1.6216216… mg/kg;
//	                          MRSD = 0.16216216… mg/kg, × 60 kg = 9.7297297… mg
//	rat 60 mg/m², divide_by:  10 / 6.2 = 1.6129032… mg/kg
//	dog 400 mg/m², km_ratio:  400 / 20 = 20 mg/kg; HED = 400 / 37 = 10.810810… mg/kg
//	150 kDa protein by IV infusion, monkey 30 mg/kg and rat 100 mg/kg, mg_per_kg:
//	                          HEDs 30 and 100 mg/kg; the monkey's is lowest; MRSD = 3 mg/kg, 180 mg
//	the same protein, monkey 360 mg/m²: 360 / 12 = 30 mg/kg = HED
func TestGuidanceExceptions(t *testing.T) {
	protein := func(kda float64, admin string, iv bool) *Article {
		return &Article{Modality: ModalityProtein, MolecularWeightGPerMol: f(kda * 1000), Administration: admin, Intravascular: iv}
	}
	cases := []struct {
		name              string
		in                Input
		hed, mrsd, mrsdMg float64
		chosen            string
	}{
		{"rat NOAEL in mg/m² by km ratio", Input{Route: RouteKmRatio, Studies: []Study{{Species: "rat", NOAELMgPerM2: f(60)}}},
			1.6216216216216217, 0.16216216216216217, 9.72972972972973, "rat"},
		{"rat NOAEL in mg/m² by divide-by", Input{Route: RouteDivideBy, Studies: []Study{{Species: "rat", NOAELMgPerM2: f(60)}}},
			1.6129032258064515, 0.16129032258064516, 9.67741935483871, "rat"},
		{"dog NOAEL in mg/m² beside a rat in mg/kg", Input{Route: RouteKmRatio, Studies: []Study{{Species: "dog", NOAELMgPerM2: f(400)}, {Species: "rat", NOAEL: f(50)}}},
			8.108108108108109, 0.8108108108108109, 48.64864864864865, "rat"},
		{"a 150 kDa protein by IV infusion scales by mg/kg", Input{Route: RouteMgPerKg, Article: protein(150, "iv_infusion", true),
			Studies: []Study{{Species: "monkey", NOAEL: f(30)}, {Species: "rat", NOAEL: f(100)}}}, 30, 3, 180, "monkey"},
		{"the same protein's NOAEL in mg/m²", Input{Route: RouteMgPerKg, Article: protein(150, "iv_bolus", true),
			Studies: []Study{{Species: "monkey", NOAELMgPerM2: f(360)}}}, 30, 3, 180, "monkey"},
		{"the same protein given subcutaneously scales by km", Input{Route: RouteKmRatio, Article: protein(150, "sc", false),
			Studies: []Study{{Species: "monkey", NOAEL: f(30)}}}, 30.0 * 12 / 37, 30.0 * 12 / 37 / 10, 30.0 * 12 / 37 / 10 * 60, "monkey"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustProject(t, c.in)
			if !near(r.HEDMgPerKg, c.hed, 1e-12) || !near(r.MRSDMgPerKg, c.mrsd, 1e-12) || !near(r.MRSDMg, c.mrsdMg, 1e-12) || r.ChosenSpecies != c.chosen {
				t.Fatalf("HED %v MRSD %v mg/kg %v mg (%s), want %v %v %v (%s)", r.HEDMgPerKg, r.MRSDMgPerKg, r.MRSDMg, r.ChosenSpecies, c.hed, c.mrsd, c.mrsdMg, c.chosen)
			}
			if r.Route != c.in.Route || !strings.Contains(r.RouteReason, "named by the caller") {
				t.Errorf("route %q, reason %q", r.Route, r.RouteReason)
			}
			if c.in.Route == RouteMgPerKg && (!strings.Contains(r.RouteReason, "over 100 kDa (150 kDa) given intravascularly") || !strings.Contains(r.RouteFormula, "one to one")) {
				t.Errorf("the route's reason %q and formula %q do not name the exception", r.RouteReason, r.RouteFormula)
			}
			for _, s := range c.in.Studies {
				if s.NOAELMgPerM2 == nil {
					continue
				}
				for _, sr := range r.Studies {
					if sr.Species == s.Species && (!strings.Contains(sr.Calculation, "mg/m² / km") || sr.NOAELMgPerM2 == nil) {
						t.Errorf("study %s: calculation %q does not show the mg/m² conversion", sr.Species, sr.Calculation)
					}
				}
				if !hasColumn(r.TableRows, s.Species, "km") {
					t.Errorf("the km of %s was read but not listed: %+v", s.Species, r.TableRows)
				}
			}
		})
	}
}

func hasColumn(rows []RowUsed, species, col string) bool {
	for _, r := range rows {
		for _, c := range r.Columns {
			if r.Species == species && c == col {
				return true
			}
		}
	}
	return false
}

// The exception is the guidance's, so it holds only where the guidance says:
// over 100 kDa (100 kDa itself is not over), a protein, given
// intravascularly; outside it mg_per_kg is refused, inside it the
// body-surface-area routes are refused with a pointer to mg_per_kg.
func TestGuidanceExceptionRefusals(t *testing.T) {
	rat := []Study{{Species: "rat", NOAEL: f(10)}}
	cases := []struct {
		name       string
		in         Input
		path, code string
	}{
		{"km ratio for a 150 kDa protein by IV bolus", Input{Route: RouteKmRatio, Studies: rat,
			Article: &Article{Modality: ModalityProtein, MolecularWeightGPerMol: f(150000), Administration: "iv_bolus", Intravascular: true}}, "inputs.route", CodeRouteNotForArticle},
		{"mg/kg for a protein of exactly 100 kDa", Input{Route: RouteMgPerKg, Studies: rat,
			Article: &Article{Modality: ModalityProtein, MolecularWeightGPerMol: f(100000), Administration: "iv_bolus", Intravascular: true}}, "inputs.route", CodeRouteNotForArticle},
		{"mg/kg for a small molecule", Input{Route: RouteMgPerKg, Studies: rat, Article: &Article{Modality: ModalitySmallMolecule}}, "inputs.route", CodeRouteNotForArticle},
		{"mg/kg without a test article", Input{Route: RouteMgPerKg, Studies: rat}, "inputs.route", CodeRouteNotForArticle},
		{"a protein without its weight", Input{Route: RouteKmRatio, Studies: rat, Article: &Article{Modality: ModalityProtein, Administration: "sc"}}, "inputs.test_article.molecular_weight", CodeRequired},
		{"an unknown modality", Input{Route: RouteKmRatio, Studies: rat, Article: &Article{Modality: "antibody"}}, "inputs.test_article.modality", CodeUnknownModality},
		{"mg/m² for a species outside the table", Input{Route: RouteBodyWeight, Studies: []Study{{Species: SpeciesOther, NOAELMgPerM2: f(60), BodyWeightKg: f(2)}}}, "inputs.studies[0].noael", CodeNOAELPerAreaNeedsKm},
		{"a NOAEL in both units", Input{Route: RouteKmRatio, Studies: []Study{{Species: "rat", NOAEL: f(10), NOAELMgPerM2: f(60)}}}, "inputs.studies[0].noael", CodeNOAELTwice},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Project(c.in)
			var pe *problem.Error
			if !errors.As(err, &pe) || len(pe.Problems) != 1 || pe.Problems[0].Path != c.path || pe.Problems[0].Code != c.code {
				t.Fatalf("want one problem at %s (%s), got %v", c.path, c.code, err)
			}
			if c.code == CodeRouteNotForArticle && c.in.Route != RouteMgPerKg && pe.Problems[0].Suggestion != RouteMgPerKg {
				t.Errorf("no suggestion of %s: %+v", RouteMgPerKg, pe.Problems[0])
			}
		})
	}
}
