package pk

import (
	"strings"
	"testing"
)

// When no terminal fit qualifies the warning says why, with what was
// received and what to do: a slope that is not falling is named as such
// (with the fitted slope and the points), not as too few samples.
func TestLambdaZNotEstimableSaysWhy(t *testing.T) {
	cases := []struct {
		name  string
		times []float64
		conc  []float64
		n     *int
		want  []string
	}{
		{"flat after the peak", []float64{0, 1, 2, 4, 6, 8}, []float64{0, 5, 4, 4, 4, 4}, nil,
			[]string{"not falling", "slope 0 1/h", "λz = 0 1/h ≤ 0", "t = 4–8 h", "C = 4, 4, 4 mg/L", "no fit of the last 3 to 4 samples", "lambda_z_points"}},
		{"rising at the end", []float64{0, 1, 2, 4, 6, 8}, []float64{0, 5, 4, 2, 3, 3.5}, nil,
			[]string{"not falling", "slope 0.1399 1/h", "λz = -0.1399 1/h", "C = 2, 3, 3.5 mg/L", "add samples later"}},
		{"fixed points not falling", []float64{0, 1, 2, 4, 6, 8}, []float64{0, 5, 2, 3, 3, 3}, iptr(3),
			[]string{"not falling", "the last 3 samples chosen by lambda_z_points", "choose other points"}},
		{"still rising at the last sample", []float64{0, 1, 2, 4}, []float64{0, 1, 2, 3}, nil,
			[]string{"peak at the last quantifiable sample", "Tmax = Tlast = 4 h", "add samples after the peak"}},
		{"two samples after the peak", []float64{0, 1, 2, 4}, []float64{0, 5, 4, 3}, nil,
			[]string{"2 positive sample(s) after Tmax (1 h), fewer than the 3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := NCA(Profile{Times: c.times, Conc: c.conc, Dose: 100, Route: RouteExtravascular}, Options{AUCMethod: AUCLinear, LambdaZPoints: c.n})
			if err != nil {
				t.Fatal(err)
			}
			if r.Terminal != nil || len(r.Warnings) == 0 || r.Warnings[0].Code != WarnLambdaZNotEstimable {
				t.Fatalf("want λz not estimable, got %+v", r)
			}
			for _, w := range c.want {
				if !strings.Contains(r.Warnings[0].Message, w) {
					t.Errorf("%q lacks %q", r.Warnings[0].Message, w)
				}
			}
		})
	}
}
