package pk

import "math"

// The partial areas of one interval [t1, t2] with concentrations c1, c2.
//
// Linear trapezoid (Gibaldi & Perrier, Pharmacokinetics, 2nd ed., 1982, app. D;
// Phoenix WinNonlin NCA user's guide, "AUC calculation methods"):
//
//	AUC  = Δt·(c1 + c2)/2
//	AUMC = Δt·(t1·c1 + t2·c2)/2
//
// Log trapezoid, used by linear_up_log_down when c2 < c1 and both are > 0; it
// integrates the exponential through the two points exactly:
//
//	AUC  = Δt·(c1 − c2)/ln(c1/c2)
//	AUMC = Δt·(t1·c1 − t2·c2)/ln(c1/c2) + Δt²·(c1 − c2)/ln(c1/c2)²
//
// (the AUMC form is ∫ t·c1·e^{−k(t−t1)} dt with k = ln(c1/c2)/Δt, the same as
// WinNonlin's Δt·(t1c1 − t2c2)/ln(c1/c2) − Δt²·(c2 − c1)/ln(c1/c2)²).
func segment(method string, t1, c1, t2, c2 float64) (auc, aumc float64) {
	dt := t2 - t1
	if method == AUCLinearUpLogDown && c2 < c1 && c2 > 0 {
		l := math.Log(c1 / c2)
		return dt * (c1 - c2) / l, dt*(t1*c1-t2*c2)/l + dt*dt*(c1-c2)/(l*l)
	}
	return dt * (c1 + c2) / 2, dt * (t1*c1 + t2*c2) / 2
}

// areas integrates the series from its first point (t = 0) to index last
// inclusive, returning AUC and AUMC.
func areas(method string, pts []point, last int) (auc, aumc float64) {
	for i := 1; i <= last; i++ {
		a, m := segment(method, pts[i-1].t, pts[i-1].c, pts[i].t, pts[i].c)
		auc += a
		aumc += m
	}
	return auc, aumc
}
