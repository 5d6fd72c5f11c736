package tox_test

import (
	"fmt"

	"github.com/scidex/substrate/skills/problem"
	"github.com/scidex/substrate/skills/tox"
)

func ExampleProject() {
	noael := 50.0 // mg/kg, 13-week rat study
	res, err := tox.Project(tox.Input{
		Studies: []tox.Study{{Species: "rat", NOAEL: &noael}},
		Route:   tox.RouteKmRatio,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("HED %.3g mg/kg by %s; MRSD %.3g mg/kg, %.3g mg for %g kg\n",
		res.HEDMgPerKg, res.Route, res.MRSDMgPerKg, res.MRSDMg, res.HumanWeightKg)
	fmt.Println(res.Decision)
	fmt.Println(res.NotComputed)
	// Output:
	// HED 8.11 mg/kg by km_ratio; MRSD 0.811 mg/kg, 48.6 mg for 60 kg
	// Projection for your decision, not a starting dose
	// PAD/MABEL not computed
}

func ExampleProject_refused() {
	low := 3.0
	noael := 50.0
	_, err := tox.Project(tox.Input{
		Studies:      []tox.Study{{Species: "rat", NOAEL: &noael}},
		Route:        tox.RouteKmRatio,
		SafetyFactor: &low,
	})
	for _, p := range err.(*problem.Error).Problems {
		fmt.Println(p.Path, p.Code)
	}
	// Output:
	// inputs.safety_factor_reason safety_factor_reason_required
}
