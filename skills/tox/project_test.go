package tox

import (
	"encoding/json"
	"strings"
	"testing"
)

func hasWarning(res *Result, code string) bool {
	for _, w := range res.Warnings {
		if w.Code == code {
			return true
		}
	}
	return false
}

// Rat 50 mg/kg (HED 50 × 6/37 = 8.108) and dog 10 mg/kg (HED 10 × 20/37 =
// 5.405): the dog is the most sensitive species, MRSD 0.5405 mg/kg,
// 32.43 mg for 60 kg.
func TestMostSensitiveSpecies(t *testing.T) {
	res := mustProject(t, Input{Route: RouteKmRatio, Studies: []Study{rat(50), {Species: "dog", NOAEL: f(10)}}})
	if res.ChosenStudy != 1 || res.ChosenSpecies != "dog" {
		t.Fatalf("chose study %d (%s), want 1 (dog)", res.ChosenStudy, res.ChosenSpecies)
	}
	if !near(res.HEDMgPerKg, 200.0/37, 1e-12) || !near(res.MRSDMg, 20.0/37*60, 1e-12) {
		t.Fatalf("HED %v, MRSD %v mg; want 5.405, 32.43", res.HEDMgPerKg, res.MRSDMg)
	}
	if !strings.Contains(res.ChoiceReason, "most sensitive") || !strings.Contains(res.ChoiceReason, "rat 8.108") {
		t.Fatalf("reason %q", res.ChoiceReason)
	}
	if len(res.Studies) != 2 || !near(res.Studies[0].HEDMgPerKg, 300.0/37, 1e-12) {
		t.Fatalf("per-study HEDs %+v", res.Studies)
	}
}

// A forced species is used even when it is not the most sensitive; among
// several studies of it, the lowest HED.
func TestForcedSpecies(t *testing.T) {
	res := mustProject(t, Input{Route: RouteKmRatio, Species: "rat",
		Studies: []Study{rat(50), {Species: "dog", NOAEL: f(10)}, rat(40)}})
	if res.ChosenStudy != 2 || res.ChosenSpecies != "rat" || !near(res.HEDMgPerKg, 240.0/37, 1e-12) {
		t.Fatalf("chose study %d (%s) HED %v, want 2 (rat) 6.486", res.ChosenStudy, res.ChosenSpecies, res.HEDMgPerKg)
	}
	if !strings.Contains(res.ChoiceReason, "chosen by the caller") {
		t.Fatalf("reason %q", res.ChoiceReason)
	}
}

// Equal HEDs: the first study wins and the reason says it was a tie.
func TestTie(t *testing.T) {
	res := mustProject(t, Input{Route: RouteDivideBy, Studies: []Study{{Species: "monkey", NOAEL: f(3.1)}, {Species: "rabbit", NOAEL: f(3.1)}}})
	if res.ChosenStudy != 0 || !strings.Contains(res.ChoiceReason, "tied") {
		t.Fatalf("chose %d, reason %q", res.ChosenStudy, res.ChoiceReason)
	}
}

func TestSafetyFactor(t *testing.T) {
	base := Input{Route: RouteKmRatio, Studies: []Study{rat(50)}}

	def := mustProject(t, base)
	if def.SafetyFactor != 10 || !def.SafetyFactorDefaulted || hasWarning(def, WarnSafetyFactorBelowDefault) {
		t.Fatalf("default: factor %v defaulted %v warnings %v", def.SafetyFactor, def.SafetyFactorDefaulted, def.Warnings)
	}

	small := base
	small.SafetyFactor, small.SafetyFactorReason = f(5), "well-characterised class, reversible toxicity"
	res := mustProject(t, small)
	if res.SafetyFactor != 5 || res.SafetyFactorDefaulted || !near(res.MRSDMgPerKg, 300.0/37/5, 1e-12) {
		t.Fatalf("factor 5: %v, MRSD %v", res.SafetyFactor, res.MRSDMgPerKg)
	}
	if !hasWarning(res, WarnSafetyFactorBelowDefault) || res.SafetyFactorReason != small.SafetyFactorReason {
		t.Fatalf("factor 5 not flagged: %v, reason %q", res.Warnings, res.SafetyFactorReason)
	}

	one := base
	one.SafetyFactor, one.SafetyFactorReason = f(1), "stated"
	if res := mustProject(t, one); !near(res.MRSDMgPerKg, res.HEDMgPerKg, 0) {
		t.Fatalf("factor 1: MRSD %v, HED %v", res.MRSDMgPerKg, res.HEDMgPerKg)
	}

	large := base
	large.SafetyFactor = f(50)
	res = mustProject(t, large)
	if res.SafetyFactor != 50 || hasWarning(res, WarnSafetyFactorBelowDefault) || !near(res.MRSDMg, 300.0/37/50*60, 1e-12) {
		t.Fatalf("factor 50: %v, MRSD %v mg, warnings %v", res.SafetyFactor, res.MRSDMg, res.Warnings)
	}
}

// Every result carries the fixed phrases word for word and names its route
// and guidance, in the Go value and in its JSON.
func TestFixedPhrases(t *testing.T) {
	res := mustProject(t, Input{Route: RouteDivideBy, Studies: []Study{rat(10)}})
	if res.Decision != "Projection for your decision, not a starting dose" ||
		res.NotComputed != "PAD/MABEL not computed" ||
		res.CheckedAgainst != "checked against FDA CDER Guidance for Industry: Estimating the Maximum Safe Starting Dose in Initial Clinical Trials for Therapeutics in Adult Healthy Volunteers July 2005" {
		t.Fatalf("phrases %q %q %q", res.Decision, res.NotComputed, res.CheckedAgainst)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"decision":"Projection for your decision, not a starting dose"`,
		`"not_computed":"PAD/MABEL not computed"`,
		`"checked_against":"checked against FDA CDER`,
		`"route":"divide_by"`,
		`"skill":"tox.fih_dose_projection"`,
		`"table_rows":[{"species":"rat","columns":["divide_by"],"status":"verified"}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
}

// A result lists the Table 1 rows it read; the km ratio reads the animal's
// and the adult human's km.
func TestTableRowsUsed(t *testing.T) {
	res := mustProject(t, Input{Route: RouteKmRatio, Studies: []Study{rat(50), {Species: "dog", NOAEL: f(10), BodyWeightKg: f(12)}}})
	var got []string
	for _, r := range res.TableRows {
		got = append(got, r.Species+":"+strings.Join(r.Columns, "+")+":"+r.Status)
	}
	want := "rat:km:verified human_adult:km+ref_body_weight_kg:verified dog:km+ref_body_weight_kg:verified"
	if strings.Join(got, " ") != want {
		t.Fatalf("rows used %v, want %s", got, want)
	}
	if hasWarning(res, WarnTableRowToVerify) {
		t.Fatalf("warnings %v", res.Warnings)
	}
}

// A to_verify row used is flagged. No animal row of the shipped table is
// to_verify, so this runs on a copy with the rat row's status changed.
func TestToVerifyRowWarns(t *testing.T) {
	tbl, err := parseTable([]byte(strings.Replace(string(tableCSV), "rat,0.15,0.025,6,6.2,verified", "rat,0.15,0.025,6,6.2,to_verify", 1)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := project(tbl, Input{Route: RouteDivideBy, Studies: []Study{rat(10)}})
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(res, WarnTableRowToVerify) || res.TableRows[0].Status != StatusToVerify {
		t.Fatalf("to_verify rat row not flagged: rows %v warnings %v", res.TableRows, res.Warnings)
	}
	// The body-weight route reads no animal row: nothing to flag.
	res, err = project(tbl, Input{Route: RouteBodyWeight, Studies: []Study{{Species: "rat", NOAEL: f(10), BodyWeightKg: f(0.15)}}})
	if err != nil {
		t.Fatal(err)
	}
	if hasWarning(res, WarnTableRowToVerify) {
		t.Fatalf("body_weight route flagged %v", res.Warnings)
	}
}

// A species outside the table goes by the body-weight route, with a warning:
// sheep 10 mg/kg at 60 kg → HED = 10 × (60/60)^0.33 = 10 mg/kg.
func TestOtherSpecies(t *testing.T) {
	res := mustProject(t, Input{Route: RouteBodyWeight, Studies: []Study{{Species: SpeciesOther, NOAEL: f(10), BodyWeightKg: f(60)}}})
	if !near(res.HEDMgPerKg, 10, 1e-12) || !hasWarning(res, WarnSpeciesOutsideTable) {
		t.Fatalf("HED %v, warnings %v", res.HEDMgPerKg, res.Warnings)
	}
}

// A human weight other than 60 kg: the body-weight route uses it in the
// exponent; the table routes keep the 60 kg factors, scale the mg dose and
// say so.
func TestHumanWeight(t *testing.T) {
	// 18 × (0.15 / 70)^0.33 / 10 × 70: the exponent term for 70 kg is
	// (60/70)^0.33 = e^(0.33 × ln 0.857143) = e^(0.33 × −0.1541507)
	// = e^−0.0508697 = 0.9504025 times the 60 kg one (0.1384587), so
	// HED = 18 × 0.1315915 = 2.368647 mg/kg, MRSD 0.2368647 mg/kg × 70 kg
	// = 16.58053 mg. Tolerance 1e-6 relative (7 figures by hand).
	res := mustProject(t, Input{Route: RouteBodyWeight, HumanWeightKg: 70,
		Studies: []Study{{Species: "rat", NOAEL: f(18), BodyWeightKg: f(0.15)}}})
	if !near(res.HEDMgPerKg, 2.368647, 1e-6) || !near(res.MRSDMg, 16.58053, 1e-6) || res.HumanWeightKg != 70 {
		t.Fatalf("HED %v, MRSD %v mg for %v kg", res.HEDMgPerKg, res.MRSDMg, res.HumanWeightKg)
	}
	res = mustProject(t, Input{Route: RouteKmRatio, HumanWeightKg: 70, Studies: []Study{rat(50)}})
	if !near(res.MRSDMg, 300.0/37/10*70, 1e-12) || !hasWarning(res, WarnHumanWeightNotReference) {
		t.Fatalf("MRSD %v mg, warnings %v", res.MRSDMg, res.Warnings)
	}
}
