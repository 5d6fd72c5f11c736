package schema

import (
	"strings"
	"testing"
)

// A market kind (liquidity) must be yes/no, sum and server_only, with a
// positive liquidity: each departure is named by its field.
func TestMarketKindChecks(t *testing.T) {
	ok := SignalRule{Dimensions: []string{"yes", "no"}, Aggregation: "sum", ServerOnly: true, Liquidity: 100}
	if out := (&Document{Signals: map[string]SignalRule{"trade": ok}}).checkViews(); len(out) != 0 {
		t.Fatalf("a well-formed market: %v", out)
	}
	for field, mutate := range map[string]func(*SignalRule){
		"signals.trade.liquidity":   func(r *SignalRule) { r.Liquidity = -1 },
		"signals.trade.dimensions":  func(r *SignalRule) { r.Dimensions = []string{"default"} },
		"signals.trade.server_only": func(r *SignalRule) { r.ServerOnly = false },
		"signals.trade.aggregation": func(r *SignalRule) { r.Aggregation = "replace" },
	} {
		r := ok
		mutate(&r)
		out := (&Document{Signals: map[string]SignalRule{"trade": r}}).checkViews()
		if len(out) != 1 || !strings.HasPrefix(out[0], field+":") {
			t.Errorf("%s: got %v", field, out)
		}
	}
}
