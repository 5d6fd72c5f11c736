package mcp_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/mcp"
)

// The market's verbs over MCP: tool.market.quote prices 10 YES on a new
// hypothesis at the hand-computed LMSR cost (b = 100: 5.1249),
// tool.market.trade buys them, the trader's quote shows its position and
// another agent's shows the moved price but no position of its own; a trade
// over its limit is an error result naming limit, and add_signal of the
// market's kind is refused.
func TestMarketTools(t *testing.T) {
	e := env(t, mcp.Options{Mutations: mcp.MutationsAll})
	cs := mustConnect(t, e, apitest.Contributor(t, "ada"))
	other := mustConnect(t, e, apitest.Contributor(t, "bo"))
	var created struct {
		CreateArtifact struct{ Ref string }
	}
	data(t, cs, "create_artifact", call(t, cs, "create_artifact", map[string]any{"input": map[string]any{"type": "hypothesis",
		"title": "LRRK2 kinase activity drives alpha-synuclein spread", "content": map[string]any{}}}), &created)
	h, _, _ := strings.Cut(created.CreateArtifact.Ref, "@")

	type market struct {
		Market struct {
			Liquidity float64 `json:"liquidity"`
			PriceYes  float64 `json:"price_yes"`
			PriceNo   float64 `json:"price_no"`
			QYes      float64 `json:"q_yes"`
			Position  struct {
				Yes float64 `json:"yes"`
			} `json:"position"`
		} `json:"market"`
		Quote struct {
			Cost float64 `json:"cost_usd"`
		} `json:"quote"`
		Trade struct {
			Cost float64 `json:"cost_usd"`
		} `json:"trade"`
	}
	want := 100 * math.Log((math.Exp(0.1)+1)/2)
	var q market
	toolData(t, cs, "tool.market.quote", call(t, cs, "tool.market.quote", map[string]any{"hypothesis": h, "side": "yes", "amount": 10}), &q)
	if math.Abs(q.Quote.Cost-want) > 1e-9 || math.Abs(q.Quote.Cost-5.1249) > 5e-5 || q.Market.PriceYes != 0.5 || q.Market.Liquidity != 100 {
		t.Fatalf("the quote: %+v, want cost %.6f", q, want)
	}
	var tr market
	toolData(t, cs, "tool.market.trade", call(t, cs, "tool.market.trade", map[string]any{"hypothesis": h, "side": "yes", "amount": 10, "limit": 0.55}), &tr)
	if math.Abs(tr.Trade.Cost-want) > 1e-9 || tr.Market.QYes != 10 || tr.Market.Position.Yes != 10 {
		t.Fatalf("the trade: %+v", tr)
	}
	var mine, theirs market
	toolData(t, cs, "tool.market.quote", call(t, cs, "tool.market.quote", map[string]any{"hypothesis": h}), &mine)
	toolData(t, other, "tool.market.quote", call(t, other, "tool.market.quote", map[string]any{"hypothesis": h}), &theirs)
	if mine.Market.Position.Yes != 10 || theirs.Market.Position.Yes != 0 || theirs.Market.PriceYes != mine.Market.PriceYes ||
		math.Abs(theirs.Market.PriceYes+theirs.Market.PriceNo-1) > 1e-15 || !(theirs.Market.PriceYes > 0.5) {
		t.Fatalf("ada's quote %+v, bo's %+v", mine.Market, theirs.Market)
	}

	before := e.Count(t, "signals WHERE kind = 'trade'")
	over := call(t, other, "tool.market.trade", map[string]any{"hypothesis": h, "side": "yes", "amount": 10, "limit": 0.5})
	if !over.IsError || !strings.Contains(text(over), "above your limit 0.5; nothing was traded") {
		t.Fatalf("a trade over its limit: error %v, %s", over.IsError, text(over))
	}
	t.Logf("over the limit: error %v: %s", over.IsError, text(over))
	var sig struct {
		AddSignal struct {
			Typename string `json:"__typename"`
		}
	}
	data(t, cs, "add_signal", call(t, cs, "add_signal", map[string]any{"input": map[string]any{"ref": h, "kind": "trade", "dimension": "yes", "value": 1000}}), &sig)
	if sig.AddSignal.Typename != "PermissionDenied" {
		t.Fatalf("a forged trade over MCP: %+v", sig)
	}
	if n := e.Count(t, "signals WHERE kind = 'trade'"); n != before {
		t.Fatalf("refusals wrote %d trades", n-before)
	}
}

// toolData decodes a substrate tool's result (its structured content, checked
// against the listed output schema) into v.
func toolData(t *testing.T, cs *sdk.ClientSession, name string, res *sdk.CallToolResult, v any) {
	t.Helper()
	raw, _ := json.Marshal(res.StructuredContent)
	if res.IsError || res.StructuredContent == nil {
		t.Fatalf("%s: %s %s", name, text(res), raw)
	}
	checkOutput(t, cs, name, raw)
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: decode %s: %v", name, raw, err)
	}
}
