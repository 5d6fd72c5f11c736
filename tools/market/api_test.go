package market_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/tools/market"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

const invokeQ = `mutation($n: String!, $a: JSON!) { invokeTool(input: {name: $n, args: $a}) {
  __typename
  ... on ToolCall { status result error }
  ... on ValidationFailed { problems { path message } }
  ... on Problem { code message } } }`

type call struct {
	Typename string `json:"__typename"`
	Status   string
	Result   json.RawMessage
	Error    *struct{ Code, Message string }
	Problems []struct{ Path, Message string }
	Code     string
	Message  string
}

func invoke(t *testing.T, e *apitest.Env, token, name string, args map[string]any) call {
	t.Helper()
	var out struct{ InvokeTool call }
	e.OK(t, token, invokeQ, map[string]any{"n": name, "a": args}, &out)
	return out.InvokeTool
}

type state struct {
	Market struct {
		Liquidity, QYes, QNo, PriceYes, PriceNo, Volume float64
		Trades                                          int
		Position                                        struct {
			Yes, No, SpentUsd float64
			Trades            int
		}
	}
	Quote, Trade struct{ CostUsd, AveragePrice, PriceYesAfter float64 }
	Budget       *struct{ SpentUsd float64 }
}

// decode reads a result's snake_case keys into state.
func decode(t *testing.T, raw json.RawMessage) state {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	b, _ := json.Marshal(camel(m))
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func camel(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, v := range x {
			out[strings.ReplaceAll(k, "_", "")] = camel(v)
		}
		return out
	}
	return v
}

func succeeded(t *testing.T, what string, c call) state {
	t.Helper()
	if c.Typename != "ToolCall" || c.Status != "SUCCEEDED" {
		t.Log(logTail())
		t.Fatalf("%s: %+v %+v", what, c, c.Error)
	}
	return decode(t, c.Result)
}

// failed asserts the call ran and was refused with a message naming field.
func failed(t *testing.T, what string, c call, field string) {
	t.Helper()
	if c.Typename != "ToolCall" || c.Status != "FAILED" || c.Error == nil || !strings.Contains(c.Error.Message, field) {
		t.Fatalf("%s: want a failed call naming %q, got %+v %+v", what, field, c, c.Error)
	}
}

// refused asserts invokeTool refused the arguments before running, naming path.
func refused(t *testing.T, what string, c call, path string) {
	t.Helper()
	if c.Typename != "ValidationFailed" {
		t.Fatalf("%s: want ValidationFailed naming %s, got %+v", what, path, c)
	}
	for _, p := range c.Problems {
		if p.Path == path {
			return
		}
	}
	t.Fatalf("%s: problems %+v name no %s", what, c.Problems, path)
}

func hypothesis(t *testing.T, e *apitest.Env, token, typ, title string) string {
	t.Helper()
	var out struct {
		CreateArtifact struct {
			Typename string `json:"__typename"`
			Ref      string
			Problems []struct{ Path, Message string }
		}
	}
	content := map[string]any{}
	if typ == "wiki_page" {
		content = map[string]any{"body": "text"}
	}
	e.OK(t, token, `mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { __typename ... on WriteSuccess { ref } ... on ValidationFailed { problems { path message } } } }`,
		map[string]any{"in": map[string]any{"type": typ, "title": title, "content": content}}, &out)
	if out.CreateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("create %s: %+v", typ, out)
	}
	r, _, _ := strings.Cut(out.CreateArtifact.Ref, "@")
	return r
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.10g, want %.10g", what, got, want)
	}
}

func signals(t *testing.T, e *apitest.Env) int { return e.Count(t, "signals WHERE kind = 'trade'") }

func spent(t *testing.T, e *apitest.Env, token string) float64 {
	t.Helper()
	var out struct{ Budget struct{ SpentUsd float64 } }
	e.OK(t, token, `{ budget { spentUsd } }`, nil, &out)
	return out.Budget.SpentUsd
}

// A trader prices, buys and sells through invokeTool: the hand-computed LMSR
// cost (b = 100, 10 YES from 0: 100·ln((e^0.1+1)/2)), prices summing to 1,
// the cost spent from the budget and returned by a sale, positions the
// trader's own; every refusal names its field and writes no trade.
func TestTradeThroughAPI(t *testing.T) {
	e := apitest.New(t)
	logTail = func() string { return grepLog(e.Log.String()) }
	alice, bob := apitest.Contributor(t, "alice"), apitest.Contributor(t, "bob")
	admin := apitest.Token(t, "ada", auth.PermAdmin, auth.PermContributor)
	e.OK(t, admin, `mutation { setBudget(input: {actor: "alice", limitUsd: 20}) { __typename } }`, nil, nil)
	h := hypothesis(t, e, alice, "hypothesis", "TREM2 R47H impairs phagocytosis")

	q := succeeded(t, "quote", invoke(t, e, bob, market.QuoteFunction, map[string]any{"hypothesis": h, "side": "yes", "amount": 10}))
	want := 100 * math.Log((math.Exp(0.1)+1)/2)
	near(t, "quoted cost", q.Quote.CostUsd, want, 1e-9)
	near(t, "quoted cost (5.1249)", q.Quote.CostUsd, 5.1249, 5e-5)
	if q.Market.Liquidity != 100 || q.Market.PriceYes != 0.5 || q.Market.PriceNo != 0.5 || q.Market.Trades != 0 {
		t.Fatalf("the empty market: %+v", q.Market)
	}

	tr := succeeded(t, "buy 10 YES", invoke(t, e, alice, market.TradeFunction, map[string]any{"hypothesis": h, "side": "yes", "amount": 10, "limit": 0.6}))
	near(t, "cost", tr.Trade.CostUsd, want, 1e-9)
	near(t, "YES price after", tr.Market.PriceYes, math.Exp(0.1)/(math.Exp(0.1)+1), 1e-12)
	near(t, "price + (1 − price)", tr.Market.PriceYes+tr.Market.PriceNo, 1, 1e-15)
	near(t, "budget spent", spent(t, e, alice), math.Round(want*1e6)/1e6, 1e-9)

	// Positions are the trader's own; the price is everyone's.
	a := succeeded(t, "alice's quote", invoke(t, e, alice, market.QuoteFunction, map[string]any{"hypothesis": h}))
	b := succeeded(t, "bob's quote", invoke(t, e, bob, market.QuoteFunction, map[string]any{"hypothesis": h}))
	if a.Market.Position.Yes != 10 || a.Market.Position.Trades != 1 || b.Market.Position.Yes != 0 || b.Market.Position.Trades != 0 ||
		b.Market.PriceYes != a.Market.PriceYes || b.Market.QYes != 10 || b.Market.Volume != 10 {
		t.Fatalf("alice sees %+v, bob sees %+v", a.Market, b.Market)
	}
	near(t, "alice's spent", a.Market.Position.SpentUsd, want, 1e-9)
	// The trade's event is alice's alone: positions are not broadcast.
	var audience []string
	if err := e.Pool.QueryRow(t.Context(), `SELECT audience FROM events WHERE event_type = 'signal.created' AND payload->>'kind' = 'trade'`).Scan(&audience); err != nil ||
		len(audience) != 1 || audience[0] != "alice" {
		t.Fatalf("the trade event's audience: %v (%v)", audience, err)
	}

	before := signals(t, e)
	budgetBefore := spent(t, e, alice)
	// Beyond the limit: 10 more YES cost about 0.5374 a share.
	failed(t, "over the limit", invoke(t, e, alice, market.TradeFunction, map[string]any{"hypothesis": h, "side": "yes", "amount": 10, "limit": 0.53}), "limit")
	// Selling more than one holds.
	failed(t, "oversell", invoke(t, e, alice, market.TradeFunction, map[string]any{"hypothesis": h, "side": "yes", "amount": -11, "limit": 0.01}), "amount")
	failed(t, "sell what bob never bought", invoke(t, e, bob, market.TradeFunction, map[string]any{"hypothesis": h, "side": "no", "amount": -1, "limit": 0.01}), "amount")
	// Beyond the budget: 40 NO cost about $21.6, and alice has about $14.9 left.
	over := invoke(t, e, alice, market.TradeFunction, map[string]any{"hypothesis": h, "side": "no", "amount": 40, "limit": 1})
	failed(t, "over budget", over, "budget")
	if !strings.Contains(over.Error.Message, "BUDGET_EXCEEDED") {
		t.Errorf("over budget: %s", over.Error.Message)
	}
	// A market-less type, an unknown artifact, a malformed ref.
	paper := hypothesis(t, e, alice, "wiki_page", "A wiki page")
	failed(t, "no market", invoke(t, e, alice, market.TradeFunction, map[string]any{"hypothesis": paper, "side": "yes", "amount": 1, "limit": 1}), "have no market")
	failed(t, "unknown", invoke(t, e, alice, market.TradeFunction, map[string]any{"hypothesis": "hypothesis:nope", "side": "yes", "amount": 1, "limit": 1}), "NOT_FOUND")
	// Bad arguments are refused before the call runs, naming the field.
	for _, c := range []struct {
		args map[string]any
		path string
	}{
		{map[string]any{"hypothesis": h, "side": "yes", "amount": 1, "limit": 0}, "input.args.limit"},
		{map[string]any{"hypothesis": h, "side": "yes", "amount": 1, "limit": 1.5}, "input.args.limit"},
		{map[string]any{"hypothesis": h, "side": "yes", "amount": 1, "limit": -0.2}, "input.args.limit"},
		{map[string]any{"hypothesis": h, "side": "yes", "amount": 1e7, "limit": 1}, "input.args.amount"},
		{map[string]any{"hypothesis": h, "side": "yes", "amount": -1e300, "limit": 1}, "input.args.amount"},
		{map[string]any{"hypothesis": h, "side": "yes", "amount": "NaN", "limit": 1}, "input.args.amount"},
		{map[string]any{"hypothesis": h, "side": "yes", "amount": "Infinity", "limit": 1}, "input.args.amount"},
		{map[string]any{"hypothesis": h, "side": "yes", "amount": 0, "limit": 1}, "input.args.amount"},
		{map[string]any{"hypothesis": h, "side": "maybe", "amount": 1, "limit": 1}, "input.args.side"},
		{map[string]any{"hypothesis": h, "side": "yes", "amount": 1}, "input.args.limit"},
	} {
		refused(t, fmt.Sprint(c.args), invoke(t, e, alice, market.TradeFunction, c.args), c.path)
	}
	if n := signals(t, e); n != before {
		t.Fatalf("refused trades wrote %d trade signals", n-before)
	}
	near(t, "budget after refusals", spent(t, e, alice), budgetBefore, 0)

	// A forged trade: addSignal of the market's kind is refused.
	var forged struct {
		AddSignal struct {
			Typename string `json:"__typename"`
			Message  string
		}
	}
	for _, tok := range []string{alice, admin} {
		e.OK(t, tok, `mutation($in: AddSignalInput!) { addSignal(input: $in) { __typename ... on Problem { message } } }`,
			map[string]any{"in": map[string]any{"ref": h, "kind": "trade", "dimension": "yes", "value": 1000}}, &forged)
		if forged.AddSignal.Typename != "PermissionDenied" || !strings.Contains(forged.AddSignal.Message, "signals.trade.server_only") {
			t.Fatalf("a forged trade: %+v", forged)
		}
	}
	if n := signals(t, e); n != before {
		t.Fatalf("a forged trade was written")
	}

	// Selling returns what the shares are worth now, to the budget as well.
	sell := succeeded(t, "sell 4 YES", invoke(t, e, alice, market.TradeFunction, map[string]any{"hypothesis": h, "side": "yes", "amount": -4, "limit": 0.5}))
	near(t, "sale", sell.Trade.CostUsd, market.TradeCost(10, 0, -4, 0, 100), 1e-9)
	if !(sell.Trade.CostUsd < 0) || sell.Market.Position.Yes != 6 || sell.Market.QYes != 6 || sell.Market.Volume != 14 {
		t.Fatalf("after the sale: %+v", sell)
	}
	near(t, "budget after the sale", spent(t, e, alice), math.Round((budgetBefore+sell.Trade.CostUsd)*1e6)/1e6, 2e-6)
}

// Concurrent trades on one market serialize: the final quantities are the
// sums of the trades, and their costs add up to C(q_final) − C(0), which a
// trade priced on a state another trade had already moved would break.
func TestConcurrentTradesSerialize(t *testing.T) {
	e := apitest.New(t)
	h := hypothesis(t, e, apitest.Contributor(t, "alice"), "hypothesis", "APOE4 drives tau spread")
	const n = 8
	costs := make([]float64, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			side, amount := "yes", 10.0+float64(i)
			if i%2 == 1 {
				side = "no"
			}
			c := invoke(t, e, apitest.Contributor(t, fmt.Sprintf("trader%d", i)), market.TradeFunction,
				map[string]any{"hypothesis": h, "side": side, "amount": amount, "limit": 1})
			costs[i] = succeeded(t, "concurrent trade", c).Trade.CostUsd
		}(i)
	}
	wg.Wait()
	var yes, no, sum float64
	for i := 0; i < n; i++ {
		if i%2 == 1 {
			no += 10 + float64(i)
		} else {
			yes += 10 + float64(i)
		}
		sum += costs[i]
	}
	q := succeeded(t, "quote", invoke(t, e, apitest.Contributor(t, "alice"), market.QuoteFunction, map[string]any{"hypothesis": h}))
	if q.Market.QYes != yes || q.Market.QNo != no || q.Market.Trades != n {
		t.Fatalf("final quantities %+v, want yes %g no %g", q.Market, yes, no)
	}
	near(t, "Σ costs = C(q) − C(0)", sum, market.Cost(yes, no, 100)-market.Cost(0, 0, 100), 1e-9)
	t.Logf("%d concurrent trades: yes %g, no %g, Σ cost %.9f", n, yes, no, sum)
}

var logTail = func() string { return "" }

func grepLog(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "internal error") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The hypothesis schema's market view ranks hypotheses by the YES price the
// market quotes: one bought YES above one bought NO, each at the price
// market.quote gives, the untraded one not listed; a kind with no liquidity
// cannot back a market view.
func TestMarketLeaderboard(t *testing.T) {
	e := apitest.New(t)
	alice := apitest.Contributor(t, "alice")
	up := hypothesis(t, e, alice, "hypothesis", "APOE4 drives tau spread")
	down := hypothesis(t, e, alice, "hypothesis", "TREM2 R47H impairs phagocytosis")
	hypothesis(t, e, alice, "hypothesis", "Never traded")
	succeeded(t, "buy YES", invoke(t, e, alice, market.TradeFunction, map[string]any{"hypothesis": up, "side": "yes", "amount": 30, "limit": 0.9}))
	succeeded(t, "buy NO", invoke(t, e, alice, market.TradeFunction, map[string]any{"hypothesis": down, "side": "no", "amount": 20, "limit": 0.9}))
	var out struct {
		Leaderboard struct {
			Kind  string
			Edges []struct {
				Node struct {
					Rank     int
					Score    float64
					Artifact struct{ Ref string }
				}
			}
		}
	}
	e.OK(t, alice, `{ leaderboard(type: "hypothesis", view: "market", first: 10) { kind edges { node { rank score artifact { ref } } } } }`, nil, &out)
	lb := out.Leaderboard
	if lb.Kind != "MARKET" || len(lb.Edges) != 2 {
		t.Fatalf("the market leaderboard: %+v", lb)
	}
	for i, h := range []string{up, down} {
		n := lb.Edges[i].Node
		if got, _, _ := strings.Cut(n.Artifact.Ref, "@"); got != h || n.Rank != i+1 {
			t.Fatalf("rank %d: %+v, want %s", i+1, n, h)
		}
		q := succeeded(t, "quote", invoke(t, e, alice, market.QuoteFunction, map[string]any{"hypothesis": h, "side": "yes", "amount": 1}))
		near(t, fmt.Sprintf("rank %d's price", i+1), n.Score, q.Market.PriceYes, 1e-9)
	}
	near(t, "the YES price after 30 YES", lb.Edges[0].Node.Score, 1/(1+math.Exp(-0.3)), 1e-9)

	reviewer := apitest.Token(t, "rosalind", auth.PermReviewer, auth.PermContributor)
	var bad struct {
		CreateArtifact struct {
			Typename string `json:"__typename"`
			Problems []struct{ Path, Message string }
		}
	}
	doc := map[string]any{"type": "bet", "schema_version": 1, "title": "Bet", "description": "A bet.", "id_strategy": "uuid",
		"mutability": "mutable_with_history", "lock_mode": "optimistic", "content_schema": map[string]any{"type": "object"},
		"links": map[string]any{}, "validators": []string{},
		"signals":   map[string]any{"vote": map[string]any{"dimensions": []string{"default"}, "value_range": []any{-1, 1}, "aggregation": "replace", "description": "A vote."}},
		"views":     map[string]any{"price": map[string]any{"kind": "market", "signal": "vote", "description": "Not a market."}},
		"lifecycle": map[string]any{"initial": nil, "states": []string{}, "transitions": []any{}},
		"merge":     map[string]any{"text_fields": []any{}, "append_only_arrays": []any{}},
		"examples":  []any{map[string]any{"id": "example", "title": "e", "content": map[string]any{}}}}
	e.OK(t, reviewer, `mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { __typename ... on ValidationFailed { problems { path message } } } }`,
		map[string]any{"in": map[string]any{"type": "schema", "id": "bet", "title": "Bet", "content": doc}}, &bad)
	named := false
	for _, p := range bad.CreateArtifact.Problems {
		named = named || strings.Contains(p.Message, "views.price.signal") && strings.Contains(p.Message, "liquidity")
	}
	if bad.CreateArtifact.Typename != "ValidationFailed" || !named {
		t.Fatalf("a market view over a vote: %+v, want views.price.signal named for its missing liquidity", bad.CreateArtifact)
	}
}
