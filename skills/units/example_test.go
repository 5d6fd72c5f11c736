package units_test

import (
	"encoding/json"
	"fmt"

	"github.com/scidex/substrate/skills/units"
)

// A skill's wrapper reads each field with the dimension it must measure,
// gathers every problem, and refuses before computing anything.
func Example() {
	args := map[string]json.RawMessage{}
	_ = json.Unmarshal([]byte(`{
		"dose":   {"value": 320, "unit": "mg"},
		"weight": 70,
		"tau":    {"value": 12, "unit": "hr"},
		"conc":   {"value": 5, "unit": "h"}
	}`), &args)

	var ps units.Problems
	dose, p := units.ParseQuantity("inputs.dose", args["dose"], units.Mass)
	ps.Add(p)
	_, p = units.ParseQuantity("inputs.weight", args["weight"], units.Mass)
	ps.Add(p)
	_, p = units.ParseQuantity("inputs.tau", args["tau"], units.Time)
	ps.Add(p)
	_, p = units.ParseQuantity("inputs.conc", args["conc"], units.AnyConcentration...)
	ps.Add(p)

	fmt.Println(dose.Canonical(), "mg")
	for _, p := range ps {
		fmt.Printf("%s %s %q\n", p.Path, p.Code, p.Suggestion)
	}
	// Output:
	// 320 mg
	// inputs.weight unit_required ""
	// inputs.tau.unit unknown_unit "h"
	// inputs.conc.unit incompatible_unit ""
}

// Conversions are exact: the float is rounded once, at the end.
func ExampleQuantity_In() {
	auc := units.MustNew(148.9, "h.mg/L") // computed in canonical units
	ng, _ := auc.In("h.ng/mL")
	perMin, _ := auc.In("min.ug/mL")
	fmt.Println(ng, perMin)

	mg := units.MustNew(1, "mg")
	ug, _ := mg.In("ug")
	back, _ := units.MustNew(ug, "ug").In("mg")
	fmt.Println(ug, back)
	// Output:
	// 148900 8934
	// 1000 1
}

func ExampleParseSeries() {
	times, ps := units.ParseSeries("inputs.times", json.RawMessage(`{"values": [0, 15, 30, 90], "unit": "min"}`), units.Time)
	fmt.Println(times.Canonical(), ps.Err())
	_, ps = units.ParseSeries("inputs.times", json.RawMessage(`[0, 0.25, 0.5]`), units.Time)
	fmt.Println(ps.Err())
	// Output:
	// [0 0.25 0.5 1.5] <nil>
	// inputs.times: unit_required: a bare array; a series needs its unit, as {"values": [0, 0.5, 1], "unit": "h"}
}

func ExampleSpecies() {
	rat, _ := units.Species("rat")
	fmt.Println(rat.Name, rat.RefBodyWeight, rat.BSA, rat.Km, rat.DivideBy, rat.Status)
	_, p := units.ParseSpecies("inputs.species", "Rat")
	fmt.Println(p.Code, p.Suggestion)
	// Output:
	// rat 0.15 kg 0.025 m2 6 6.2 verified
	// unknown_species rat
}
