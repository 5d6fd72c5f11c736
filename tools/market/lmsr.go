package market

import "math"

// The LMSR (Hanson's logarithmic market scoring rule) over two outcomes,
// YES and NO, with liquidity b: the market maker's cost function is
// C(q) = b·ln(e^{q_yes/b} + e^{q_no/b}), a trade moving the quantities from
// q to q' costs C(q') − C(q), and the price of an outcome is its share of
// the sum, e^{q_i/b} / Σ_j e^{q_j/b}. Everything here is a pure function of
// the quantities, so prices are a view over the trades that made them.

// logSumExp is ln(e^x + e^y) without overflow: the larger term is factored
// out, so the exponentials are at most 1.
func logSumExp(x, y float64) float64 {
	m := math.Max(x, y)
	return m + math.Log(math.Exp(x-m)+math.Exp(y-m))
}

// Cost is C(q) for the quantities yes and no and liquidity b.
func Cost(yes, no, b float64) float64 {
	return b * logSumExp(yes/b, no/b)
}

// TradeCost is what moving the quantities from (yes, no) by dYes and dNo
// costs (negative: what a sale pays back), C(q') − C(q), as one difference of
// log-sum-exps so large quantities do not cancel twice.
func TradeCost(yes, no, dYes, dNo, b float64) float64 {
	return b * (logSumExp((yes+dYes)/b, (no+dNo)/b) - logSumExp(yes/b, no/b))
}

// PriceYes is the YES price at (yes, no): 1/(1 + e^{(no−yes)/b}), the
// logistic form, which neither overflows nor loses 1 − price.
func PriceYes(yes, no, b float64) float64 {
	return 1 / (1 + math.Exp((no-yes)/b))
}

// PriceNo is the NO price, computed the same way, so the two sum to 1 up to
// rounding.
func PriceNo(yes, no, b float64) float64 {
	return 1 / (1 + math.Exp((yes-no)/b))
}
