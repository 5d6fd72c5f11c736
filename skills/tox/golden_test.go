package tox

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

func mustProject(t *testing.T, in Input) *Result {
	t.Helper()
	res, err := Project(in)
	if err != nil {
		t.Fatalf("Project: %v", err)
	}
	return res
}

func near(got, want, relTol float64) bool {
	return math.Abs(got-want) <= relTol*math.Abs(want)
}

// Issue 10: rat NOAEL 50 mg/kg → HED 8.1 mg/kg by the km ratio.
// HED = 50 × km_rat / km_human = 50 × 6 / 37 = 300 / 37 = 8.108108… mg/kg,
// 8.1 to two significant figures. MRSD = 8.108108 / 10 = 0.8108108 mg/kg,
// × 60 kg = 48.648648… mg.
func TestRatKmRatio(t *testing.T) {
	res := mustProject(t, Input{Studies: []Study{{Species: "rat", NOAEL: f(50)}}, Route: RouteKmRatio})
	if !near(res.HEDMgPerKg, 8.108108108, 1e-9) {
		t.Fatalf("HED = %v mg/kg, want 300/37 = 8.108108…", res.HEDMgPerKg)
	}
	if got := strconv.FormatFloat(res.HEDMgPerKg, 'g', 2, 64); got != "8.1" {
		t.Fatalf("HED to 2 s.f. = %s, want 8.1", got)
	}
	if !near(res.MRSDMgPerKg, 0.8108108108, 1e-9) || !near(res.MRSDMg, 48.648648648, 1e-9) {
		t.Fatalf("MRSD = %v mg/kg, %v mg; want 0.81081 mg/kg, 48.649 mg", res.MRSDMgPerKg, res.MRSDMg)
	}
	if res.Route != RouteKmRatio || !strings.Contains(res.RouteFormula, "km_human = 37") {
		t.Fatalf("route %q, formula %q", res.Route, res.RouteFormula)
	}
}

// Issue 10: rat NOAEL 18 mg/kg at 0.15 kg → MRSD 15 mg for 60 kg by the
// body-weight route.
//
//	W_animal / W_human = 0.15 / 60 = 0.0025
//	ln 0.0025 = −(ln 4 + 2 ln 10) = −(1.3862944 + 4.6051702) = −5.9914645
//	× 0.33 = −1.9771833; e^−1.9771833 = e^−2 × e^0.0228167
//	       = 0.1353353 × 1.0230790 = 0.1384587
//	HED  = 18 × 0.1384587 = 2.492256 mg/kg
//	MRSD = 2.492256 / 10 = 0.2492256 mg/kg; × 60 kg = 14.95354 mg ≈ 15 mg
//
// (The brief's "2.50… mg/kg" is this 2.49 rounded to two figures.)
// Tolerance 1e-6 relative: the hand arithmetic carries 7 figures.
func TestRatBodyWeight(t *testing.T) {
	res := mustProject(t, Input{
		Studies: []Study{{Species: "rat", NOAEL: f(18), BodyWeightKg: f(0.15)}},
		Route:   RouteBodyWeight,
	})
	if !near(res.HEDMgPerKg, 2.492256, 1e-6) {
		t.Fatalf("HED = %v mg/kg, want 2.492256", res.HEDMgPerKg)
	}
	if !near(res.MRSDMgPerKg, 0.2492256, 1e-6) {
		t.Fatalf("MRSD = %v mg/kg, want 0.2492256", res.MRSDMgPerKg)
	}
	if !near(res.MRSDMg, 14.95354, 1e-6) || math.Round(res.MRSDMg) != 15 {
		t.Fatalf("MRSD = %v mg, want 14.95354 ≈ 15", res.MRSDMg)
	}
	if res.HumanWeightKg != 60 || res.Route != RouteBodyWeight {
		t.Fatalf("human weight %v, route %q", res.HumanWeightKg, res.Route)
	}
}

// The README's caveat: rat 10 mg/kg gives 10 / 6.2 = 1.6129 by the divide-by
// factor and 10 × 6 / 37 = 1.6216 by the km ratio, 0.5% apart. Both results
// name their route, and the numbers are not silently made to agree.
func TestDivideByVersusKmRatio(t *testing.T) {
	in := Input{Studies: []Study{{Species: "rat", NOAEL: f(10)}}}
	in.Route = RouteDivideBy
	div := mustProject(t, in)
	in.Route = RouteKmRatio
	km := mustProject(t, in)
	t.Logf("rat 10 mg/kg: HED %.4f mg/kg by %s (%s), %.4f mg/kg by %s (%s)",
		div.HEDMgPerKg, div.Route, div.Studies[0].Calculation, km.HEDMgPerKg, km.Route, km.Studies[0].Calculation)
	if got := strconv.FormatFloat(div.HEDMgPerKg, 'f', 3, 64); got != "1.613" {
		t.Errorf("divide_by HED = %s, want 1.613 (10 / 6.2)", got)
	}
	if got := strconv.FormatFloat(km.HEDMgPerKg, 'f', 3, 64); got != "1.622" {
		t.Errorf("km_ratio HED = %s, want 1.622 (60 / 37)", got)
	}
	if div.Route != RouteDivideBy || !strings.Contains(div.Studies[0].Calculation, "/ 6.2") {
		t.Errorf("divide_by result names route %q, calculation %q", div.Route, div.Studies[0].Calculation)
	}
	if km.Route != RouteKmRatio || !strings.Contains(km.Studies[0].Calculation, "6 / 37") {
		t.Errorf("km_ratio result names route %q, calculation %q", km.Route, km.Studies[0].Calculation)
	}
}

// csvRow is a Table 1 row read by this test on its own, not by the package.
type csvRow struct {
	species              string
	weight, km, divideBy float64
	status               string
}

func readTableForTest(t *testing.T) (animals []csvRow, humanKm, humanKg float64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "refdata", "fda2005_table1.csv")) // the build's one copy, read independently of its parser
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("parse %q: %v", s, err)
		}
		return v
	}
	for _, r := range recs[1:] {
		switch {
		case r[0] == "human_adult":
			humanKg, humanKm = num(r[1]), num(r[3])
		case strings.HasPrefix(r[0], "human_"):
		default:
			animals = append(animals, csvRow{r[0], num(r[1]), num(r[3]), num(r[4]), r[5]})
		}
	}
	if len(animals) != 13 || humanKm != 37 || humanKg != 60 {
		t.Fatalf("read %d animals, human km %v, %v kg", len(animals), humanKm, humanKg)
	}
	return animals, humanKm, humanKg
}

// Every species in the table by every route, the expected HED computed here
// from the CSV's columns by the guidance's formulas:
//
//	divide_by:   HED = NOAEL / divide_by
//	km_ratio:    HED = NOAEL × km / km_human
//	body_weight: HED = NOAEL × (ref_body_weight / 60)^0.33
//	mg_per_kg:   HED = NOAEL (for a 150 kDa protein given as an IV infusion)
//
// NOAEL 100 mg/kg, body weight the row's reference weight; MRSD = HED / 10
// and × 60 kg. Tolerance 1e-12 relative (the same formula in float64).
func TestEverySpeciesEveryRoute(t *testing.T) {
	animals, humanKm, humanKg := readTableForTest(t)
	const noael = 100.0
	for _, a := range animals {
		want := map[string]float64{
			RouteDivideBy:   noael / a.divideBy,
			RouteKmRatio:    noael * a.km / humanKm,
			RouteBodyWeight: noael * math.Pow(a.weight/humanKg, 0.33),
			RouteMgPerKg:    noael,
		}
		for _, route := range Routes() {
			in := Input{Studies: []Study{{Species: a.species, NOAEL: f(noael)}}, Route: route}
			if route == RouteBodyWeight {
				in.Studies[0].BodyWeightKg = f(a.weight)
			}
			if route == RouteMgPerKg {
				in.Article = &Article{Modality: ModalityProtein, MolecularWeightGPerMol: f(150000), Administration: "iv_infusion", Intravascular: true}
			}
			res := mustProject(t, in)
			w := want[route]
			if !near(res.HEDMgPerKg, w, 1e-12) || !near(res.Studies[0].HEDMgPerKg, w, 1e-12) {
				t.Errorf("%s by %s: HED %v, want %v", a.species, route, res.HEDMgPerKg, w)
			}
			if !near(res.MRSDMgPerKg, w/10, 1e-12) || !near(res.MRSDMg, w/10*60, 1e-12) {
				t.Errorf("%s by %s: MRSD %v mg/kg %v mg, want %v, %v", a.species, route, res.MRSDMgPerKg, res.MRSDMg, w/10, w/10*60)
			}
			if res.Route != route || res.ChosenSpecies != a.species {
				t.Errorf("%s by %s: route %q species %q", a.species, route, res.Route, res.ChosenSpecies)
			}
			for _, r := range res.TableRows {
				if r.Species == a.species && r.Status != a.status {
					t.Errorf("%s by %s: row status %s, csv says %s", a.species, route, r.Status, a.status)
				}
			}
		}
		// The divide-by factor and the km ratio are two roundings of one
		// scaling: they agree within 5% for every row (the widest gap is
		// mini_pig, 1/1.1 against 35/37: divide_by 3.9% lower).
		if d := want[RouteDivideBy] / want[RouteKmRatio]; d < 0.95 || d > 1.05 {
			t.Errorf("%s: divide_by / km_ratio = %v", a.species, d)
		}
		// The body-weight formula at the reference weight is further off:
		// within 20% of the km ratio (hamster 0.833, squirrel monkey 1.156).
		if d := want[RouteBodyWeight] / want[RouteKmRatio]; d < 0.8 || d > 1.2 {
			t.Errorf("%s: body_weight / km_ratio = %v", a.species, d)
		}
	}
}
