package pk_test

import (
	"fmt"

	"github.com/scidex/substrate/skills/pk"
	"github.com/scidex/substrate/skills/problem"
)

// Theophylline subject 1 (R's datasets::Theoph), 320 mg orally.
func ExampleNCA() {
	p := pk.Profile{
		Subject: "1",
		Times:   []float64{0, 0.25, 0.57, 1.12, 2.02, 3.82, 5.1, 7.03, 9.05, 12.12, 24.37},
		Conc:    []float64{0.74, 2.84, 6.57, 10.5, 9.66, 8.58, 8.36, 7.47, 6.89, 5.94, 3.28},
		Dose:    320,
		Route:   pk.RouteExtravascular,
	}
	r, err := pk.NCA(p, pk.Options{AUCMethod: pk.AUCLinear})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("Cmax %.2f mg/L at %.2f h\n", r.Cmax, r.Tmax)
	fmt.Printf("AUClast %.3f mg.h/L, AUCinf %.2f mg.h/L (%.1f%% extrapolated)\n", r.AUClast, *r.AUCinfObs, *r.AUCPctExtrapObs)
	fmt.Printf("λz %.5f /h from t = %v h (%d points), t½ %.2f h\n", r.Terminal.LambdaZ, r.Terminal.Times, r.Terminal.N, r.Terminal.HalfLife)
	fmt.Printf("%s %.3f L/h, %s %.2f L\n", r.CLName, *r.CLObs, r.VzName, *r.VzObs)
	for _, w := range r.Warnings {
		fmt.Println("warning:", w.Code)
	}
	// Output:
	// Cmax 10.50 mg/L at 1.12 h
	// AUClast 148.923 mg.h/L, AUCinf 216.61 mg.h/L (31.2% extrapolated)
	// λz 0.04846 /h from t = [9.05 12.12 24.37] h (3 points), t½ 14.30 h
	// CL/F 1.477 L/h, Vz/F 30.49 L
	// warning: auc_extrapolated_over_20_percent
}

func ExampleNCA_refused() {
	_, err := pk.NCA(pk.Profile{Times: []float64{0, 2, 1}, Conc: []float64{0, 3, -1}, Dose: 10, Route: pk.RouteIVBolus},
		pk.Options{AUCMethod: pk.AUCLinearUpLogDown})
	for _, p := range err.(*problem.Error).Problems {
		fmt.Println(p.Path, p.Code)
	}
	// Output:
	// times[2] unsorted_times
	// conc[2] negative_concentration
}
