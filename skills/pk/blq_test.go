package pk

import "testing"

// TestBLQRules: one profile with BLQ values before, between and after the
// quantifiable ones (LLOQ 0.5), under each rule. Expected AUCs by hand, linear
// trapezoids over the samples each rule keeps.
func TestBLQRules(t *testing.T) {
	base := Profile{
		Times: []float64{0, 1, 2, 3, 4, 6, 8, 10},
		Conc:  []float64{0.1, 2, 4, 0.2, 3, 2, 1, 0.3}, // BLQ at t = 0, 3, 10
		Dose:  10, Route: RouteExtravascular, LLOQ: fptr(0.5),
	}
	// Segments: [0,1] 0→2: 1; [1,2]: 3; [2,4] 4→3 (3 dropped): 7; [2,3] 4→0: 2; [3,4] 0→3: 1.5;
	// [4,6]: 5; [6,8]: 3; [8,10] 1→0: 1.
	cases := []struct {
		rule                   string
		auclast, aucall        float64
		zeroed, excluded, kept int
	}{
		{BLQZero, 1 + 3 + 2 + 1.5 + 5 + 3, 1 + 3 + 2 + 1.5 + 5 + 3 + 1, 3, 0, 8},
		// Missing: t = 0 dropped, so C(0) = 0 is assumed: [0,1] is 1 again.
		{BLQMissing, 1 + 3 + 7 + 5 + 3, 1 + 3 + 7 + 5 + 3, 0, 3, 5},
		{BLQZeroBeforeTmaxMissingAfter, 1 + 3 + 7 + 5 + 3, 1 + 3 + 7 + 5 + 3, 1, 2, 6},
		{BLQZeroLeadingTrailingMissingMiddle, 1 + 3 + 7 + 5 + 3, 1 + 3 + 7 + 5 + 3 + 1, 2, 1, 7},
	}
	for _, tc := range cases {
		p := base
		p.BLQRule = tc.rule
		pts, z, x := applyBLQ(p)
		if z != tc.zeroed || x != tc.excluded || len(pts) != tc.kept {
			t.Errorf("%s: zeroed %d excluded %d kept %d, want %d %d %d", tc.rule, z, x, len(pts), tc.zeroed, tc.excluded, tc.kept)
		}
		r, err := NCA(p, Options{AUCMethod: AUCLinear})
		if err != nil {
			t.Fatal(err)
		}
		if !near(r.AUClast, tc.auclast, 1e-12) || !near(r.AUCall, tc.aucall, 1e-12) {
			t.Errorf("%s: AUClast %v AUCall %v, want %v %v", tc.rule, r.AUClast, r.AUCall, tc.auclast, tc.aucall)
		}
		if r.Tlast != 8 || r.Clast != 1 || r.Cmax != 4 || r.BLQRule != tc.rule {
			t.Errorf("%s: Tlast %v Clast %v Cmax %v rule %q", tc.rule, r.Tlast, r.Clast, r.Cmax, r.BLQRule)
		}
		if (tc.zeroed > 0) != hasNote(r.Imputations, NoteBLQZeroed) || (tc.excluded > 0) != hasNote(r.Imputations, NoteBLQExcluded) {
			t.Errorf("%s: imputations %v", tc.rule, r.Imputations)
		}
		// λz never uses a BLQ or zero value: the fit is over t = 4, 6, 8.
		if r.Terminal == nil || r.Terminal.N != 3 || r.Terminal.Times[0] != 4 {
			t.Errorf("%s: terminal %+v", tc.rule, r.Terminal)
		}
	}
}
