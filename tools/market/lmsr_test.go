package market

import (
	"math"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.10g, want %.10g (±%g)", what, got, want, tol)
	}
}

// The hand-computed values of the brief: b = 100, buying 10 YES from an
// empty market costs 100·ln((e^0.1 + 1)/2) ≈ 5.1249.
func TestLMSRHandValues(t *testing.T) {
	const b = 100
	want := 100 * math.Log((math.Exp(0.1)+1)/2)
	near(t, "cost of 10 YES from 0", TradeCost(0, 0, 10, 0, b), want, 1e-12)
	near(t, "cost of 10 YES from 0", TradeCost(0, 0, 10, 0, b), 5.1249, 5e-5)
	near(t, "C(0)", Cost(0, 0, b), 100*math.Ln2, 1e-12)
	near(t, "price at 0", PriceYes(0, 0, b), 0.5, 0)
	// After 10 YES the YES price is e^0.1/(e^0.1+1) = 0.52497918747894.
	near(t, "YES price after 10 YES", PriceYes(10, 0, b), 0.52497918747894, 1e-12)
	// Buying then selling the same shares costs nothing net.
	near(t, "round trip", TradeCost(0, 0, 10, 0, b)+TradeCost(10, 0, -10, 0, b), 0, 1e-12)
	// A NO purchase at a symmetric state costs what the YES one does.
	near(t, "NO symmetric", TradeCost(0, 0, 0, 10, b), want, 1e-12)
}

// Stable at extremes: no overflow to Inf or NaN, prices sum to 1, and the
// cost of a trade stays within its bounds (0 < cost < shares for a buy).
func TestLMSRStableAtExtremes(t *testing.T) {
	for _, q := range []struct{ yes, no, b float64 }{
		{0, 0, 100}, {1e6, 0, 100}, {0, 1e6, 100}, {1e6, 1e6, 0.01}, {-5e5, 3e5, 7}, {1e9, -1e9, 1},
	} {
		py, pn := PriceYes(q.yes, q.no, q.b), PriceNo(q.yes, q.no, q.b)
		near(t, "price + (1 − price)", py+pn, 1, 1e-15)
		if c := Cost(q.yes, q.no, q.b); math.IsInf(c, 0) || math.IsNaN(c) {
			t.Errorf("C(%v) = %v", q, c)
		}
		c := TradeCost(q.yes, q.no, 10, 0, q.b)
		if !(c >= 0 && c <= 10+1e-6) {
			t.Errorf("buying 10 YES at %v costs %v, want within [0, 10]", q, c)
		}
	}
}
