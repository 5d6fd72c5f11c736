// Package market is the hypothesis prediction market, one of SPEC-001's
// action verbs (§7.4) as two in_process tools: market.trade buys or sells
// YES or NO shares of an artifact whose type declares a market (a signal
// kind with a liquidity, server_only: hypothesis' trade), priced by an LMSR
// market maker; market.quote reads the market (prices, liquidity, volume,
// the caller's own position) and what a trade would cost.
//
// A trade is a signal of the market's kind on the artifact (dimension the
// side, value the shares, negative when sold, metadata its cost), written by
// ServerSignal and nowhere else: prices and positions are computed from
// these signals on every read, never kept apart. Each trade runs in one
// transaction holding an advisory lock on its market, so concurrent trades
// are priced one after the other, and its cost is spent from the trader's
// budget (internal/budget) in that same transaction: a trade the budget
// cannot pay is refused BUDGET_EXCEEDED and writes nothing.
package market

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/google/uuid"

	"github.com/scidex/substrate/internal/budget"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
)

// The functions' names (runtime_config.function and the tools' names).
const (
	TradeFunction = "market.trade"
	QuoteFunction = "market.quote"
)

// MaxShares is the most shares one trade may buy or sell.
const MaxShares = 1e6

// operation is the server operation a trade's signal is written as: the
// tool call that records it.
const operation = "invokeTool"

// Market reads and trades through st as the caller, spending from budgets.
type Market struct {
	st      *store.Store
	budgets *budget.Budgets
}

// New returns the market over st; nil budgets counts against no limit but
// the actors' own rows (budget.New with no operator default).
func New(st *store.Store, budgets *budget.Budgets) *Market {
	if budgets == nil {
		budgets = budget.New(budget.Default{})
	}
	return &Market{st: st, budgets: budgets}
}

// TradeArgs is market.trade's input.
type TradeArgs struct {
	Hypothesis string  `json:"hypothesis"`
	Side       string  `json:"side"`
	Amount     float64 `json:"amount"`
	Limit      float64 `json:"limit"`
}

// QuoteArgs is market.quote's input: a trade to price is optional.
type QuoteArgs struct {
	Hypothesis string   `json:"hypothesis"`
	Side       string   `json:"side,omitempty"`
	Amount     *float64 `json:"amount,omitempty"`
}

// Position is what one actor holds and has paid.
type Position struct {
	Yes float64 `json:"yes"`
	No  float64 `json:"no"`
	// Spent is what the actor's trades cost net of what its sales returned.
	Spent  float64 `json:"spent_usd"`
	Trades int     `json:"trades"`
}

// State is a market as its trades make it.
type State struct {
	Ref       string  `json:"hypothesis"`
	Kind      string  `json:"market"`
	Liquidity float64 `json:"liquidity"`
	Yes       float64 `json:"q_yes"`
	No        float64 `json:"q_no"`
	PriceYes  float64 `json:"price_yes"`
	PriceNo   float64 `json:"price_no"`
	// Volume is the shares traded, bought or sold; Trades how many trades.
	Volume   float64  `json:"volume"`
	Trades   int      `json:"trades"`
	Position Position `json:"position"`
}

// Priced is what a trade costs at a state.
type Priced struct {
	Side   string  `json:"side"`
	Amount float64 `json:"amount"`
	// Cost is what the trader pays (negative: is paid back, for a sale).
	Cost float64 `json:"cost_usd"`
	// AveragePrice is |cost| per share.
	AveragePrice  float64 `json:"average_price"`
	PriceYesAfter float64 `json:"price_yes_after"`
}

// refuse is a refusal naming field; its message says only that the market
// refused, so a tool call's error (code: message (field: why)) says why once.
func refuse(field, constraint, msg string, value any) error {
	p := problem.Invalid(problem.Field(field, constraint, msg, value))
	p.Message = "the trade is refused"
	return p
}

// checkTrade refuses what no market could take: a side other than yes or
// no, an amount that is zero, not finite or beyond MaxShares, a limit
// outside (0, 1]. JSON Schema says most of it; this says it again for a
// caller reaching Trade without the schema, and names each field.
func checkTrade(a TradeArgs) error {
	var ds []problem.Detail
	if a.Side != "yes" && a.Side != "no" {
		ds = append(ds, problem.Field("side", "enum", "a side is yes or no", a.Side))
	}
	if math.IsNaN(a.Amount) || math.IsInf(a.Amount, 0) || a.Amount == 0 || math.Abs(a.Amount) > MaxShares {
		ds = append(ds, problem.Field("amount", "range", fmt.Sprintf("shares to buy (negative: to sell), not 0, at most %g either way", float64(MaxShares)), a.Amount))
	}
	if math.IsNaN(a.Limit) || !(a.Limit > 0 && a.Limit <= 1) {
		ds = append(ds, problem.Field("limit", "range", "the worst average price per share accepted, above 0 and at most 1", a.Limit))
	}
	if len(ds) > 0 {
		return problem.Invalid(ds...)
	}
	return nil
}

// market finds the artifact and its type's market kind, as the caller: an
// unreadable artifact is not found, and a type declaring no market is
// refused naming hypothesis.
func (m *Market) market(ctx context.Context, st *store.Store, raw string) (*store.Artifact, string, schema.SignalRule, error) {
	r, err := ref.Parse(raw)
	if err != nil {
		return nil, "", schema.SignalRule{}, refuse("hypothesis", "ref", err.Error(), raw)
	}
	a, err := st.Get(ctx, r.Unpinned())
	if errors.Is(err, store.ErrNotFound) {
		// Unknown and unreadable are one answer: which private artifacts
		// exist is not told.
		return nil, "", schema.SignalRule{}, problem.NotFoundRef(r.Unpinned().String())
	}
	if err != nil {
		return nil, "", schema.SignalRule{}, err
	}
	t, err := st.Registry().Get(ctx, a.Type)
	if err != nil {
		return nil, "", schema.SignalRule{}, err
	}
	kinds := make([]string, 0, len(t.Doc.Signals))
	for k, rule := range t.Doc.Signals {
		if rule.Liquidity > 0 && rule.ServerOnly {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return nil, "", schema.SignalRule{}, refuse("hypothesis", "market",
			fmt.Sprintf("%s artifacts have no market: their schema declares no signal kind with a liquidity (docs/market.md)", a.Type), raw)
	}
	sort.Strings(kinds)
	return a, kinds[0], t.Doc.Signals[kinds[0]], nil
}

// load reads the market's state from its trades, the caller's position
// among them.
func load(ctx context.Context, db dbsqlc.DBTX, a *store.Artifact, kind string, b float64, actor string) (*State, error) {
	rows, err := dbsqlc.New(db).MarketState(ctx, actor, a.PK, kind)
	if err != nil {
		return nil, fmt.Errorf("read the market of %s: %w", a.Unpinned(), err)
	}
	s := &State{Ref: a.Unpinned().String(), Kind: kind, Liquidity: b}
	for _, r := range rows {
		switch r.Dimension {
		case "yes":
			s.Yes, s.Position.Yes = r.Shares, r.Mine
		case "no":
			s.No, s.Position.No = r.Shares, r.Mine
		}
		s.Trades += int(r.Trades)
		s.Volume += r.Volume
		s.Position.Spent += r.Spent
		s.Position.Trades += int(r.MyTrades)
	}
	s.PriceYes, s.PriceNo = PriceYes(s.Yes, s.No, b), PriceNo(s.Yes, s.No, b)
	return s, nil
}

// price is what side's amount costs at s.
func (s *State) price(side string, amount float64) Priced {
	dy, dn := amount, 0.0
	if side == "no" {
		dy, dn = 0, amount
	}
	c := TradeCost(s.Yes, s.No, dy, dn, s.Liquidity)
	return Priced{Side: side, Amount: amount, Cost: c, AveragePrice: math.Abs(c) / math.Abs(amount),
		PriceYesAfter: PriceYes(s.Yes+dy, s.No+dn, s.Liquidity)}
}

func actorOf(ctx context.Context) (string, error) {
	rc := request.From(ctx)
	if rc == nil || rc.Anonymous || rc.Actor.ID == "" {
		return "", problem.New(problem.PermissionDenied, "the market needs a signed-in actor")
	}
	return rc.Actor.ID, nil
}

// Trade buys (amount > 0) or sells (amount < 0) shares of side at the
// market's price, within limit and the caller's budget and holdings.
func (m *Market) Trade(ctx context.Context, in TradeArgs) (map[string]any, error) {
	if err := checkTrade(in); err != nil {
		return nil, err
	}
	actor, err := actorOf(ctx)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = m.st.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		st := tx.Store()
		a, kind, rule, err := m.market(ctx, st, in.Hypothesis)
		if err != nil {
			return err
		}
		// One trade of a market at a time: the next is priced on the state
		// this one leaves.
		if err := dbsqlc.New(tx.Conn()).MarketLock(ctx, a.PK); err != nil {
			return fmt.Errorf("lock the market of %s: %w", a.Unpinned(), err)
		}
		s, err := load(ctx, tx.Conn(), a, kind, rule.Liquidity, actor)
		if err != nil {
			return err
		}
		held := s.Position.Yes
		if in.Side == "no" {
			held = s.Position.No
		}
		if in.Amount < 0 && -in.Amount > held+1e-9 {
			return refuse("amount", "holdings", fmt.Sprintf("you hold %g %s shares of %s and cannot sell %g", held, in.Side, s.Ref, -in.Amount), in.Amount)
		}
		p := s.price(in.Side, in.Amount)
		if in.Amount > 0 && p.AveragePrice > in.Limit {
			return refuse("limit", "price", fmt.Sprintf("buying %g %s costs %.6f a share on average (%.6f in all), above your limit %g; nothing was traded",
				in.Amount, in.Side, p.AveragePrice, p.Cost, in.Limit), in.Limit)
		}
		if in.Amount < 0 && p.AveragePrice < in.Limit {
			return refuse("limit", "price", fmt.Sprintf("selling %g %s returns %.6f a share on average (%.6f in all), below your limit %g; nothing was traded",
				-in.Amount, in.Side, p.AveragePrice, -p.Cost, in.Limit), in.Limit)
		}
		now := request.From(ctx).Now
		var bud *budget.Budget
		if p.Cost > 0 {
			// The cost is held and spent at once, under the budget row's
			// lock: a trade the budget cannot pay is refused here.
			hold := "market:" + uuid.NewString()
			if err := m.budgets.Hold(ctx, tx.Conn(), actor, hold, p.Cost, now); err != nil {
				return err
			}
			if bud, err = m.budgets.Settle(ctx, tx.Conn(), actor, hold, p.Cost, now); err != nil {
				return err
			}
		} else if bud, err = m.budgets.Credit(ctx, tx.Conn(), actor, -p.Cost, now); err != nil {
			return err
		}
		meta, _ := json.Marshal(map[string]any{"cost_usd": p.Cost, "average_price": p.AveragePrice,
			"price_yes_before": s.PriceYes, "price_yes_after": p.PriceYesAfter, "liquidity": rule.Liquidity})
		side := in.Side
		if _, err := st.ServerSignal(ctx, operation, store.SignalParams{Ref: s.Ref, Kind: kind, Dimension: &side,
			Value: in.Amount, Metadata: meta}, []string{actor}); err != nil {
			return err
		}
		if in.Side == "yes" {
			s.Yes += in.Amount
			s.Position.Yes += in.Amount
		} else {
			s.No += in.Amount
			s.Position.No += in.Amount
		}
		s.Trades++
		s.Volume += math.Abs(in.Amount)
		s.Position.Trades++
		s.Position.Spent += p.Cost
		s.PriceYes, s.PriceNo = PriceYes(s.Yes, s.No, s.Liquidity), PriceNo(s.Yes, s.No, s.Liquidity)
		out = map[string]any{"trade": p, "market": s}
		if bud != nil {
			out["budget"] = map[string]any{"limit_usd": bud.LimitUSD, "spent_usd": bud.SpentUSD, "remaining_usd": bud.RemainingUSD()}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Quote reads the market and, given a side and amount, what that trade
// would cost now.
func (m *Market) Quote(ctx context.Context, in QuoteArgs) (map[string]any, error) {
	actor, err := actorOf(ctx)
	if err != nil {
		return nil, err
	}
	if in.Amount != nil && (math.IsNaN(*in.Amount) || math.IsInf(*in.Amount, 0) || *in.Amount == 0 || math.Abs(*in.Amount) > MaxShares) {
		return nil, refuse("amount", "range", fmt.Sprintf("shares to price (negative: a sale), not 0, at most %g either way", float64(MaxShares)), *in.Amount)
	}
	if (in.Amount != nil) != (in.Side != "") {
		return nil, refuse("side", "together", "to price a trade give both side and amount; give neither to read the market", in.Side)
	}
	if in.Side != "" && in.Side != "yes" && in.Side != "no" {
		return nil, refuse("side", "enum", "a side is yes or no", in.Side)
	}
	a, kind, rule, err := m.market(ctx, m.st, in.Hypothesis)
	if err != nil {
		return nil, err
	}
	s, err := load(ctx, m.st.Pool(), a, kind, rule.Liquidity, actor)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"market": s}
	if in.Amount != nil {
		out["quote"] = s.price(in.Side, *in.Amount)
	}
	return out, nil
}

// TradeFunc is market.trade as an in_process function.
func (m *Market) TradeFunc() func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
	return func(ctx context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		var in TradeArgs
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, refuse("args", "json", err.Error(), nil)
		}
		out, err := m.Trade(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

// QuoteFunc is market.quote as an in_process function.
func (m *Market) QuoteFunc() func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
	return func(ctx context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		var in QuoteArgs
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, refuse("args", "json", err.Error(), nil)
		}
		out, err := m.Quote(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

// CheckTrade is market.trade's argument check (inprocess.ArgsCheck): what
// JSON Schema cannot say, an amount of 0.
func CheckTrade(args json.RawMessage) []runtimes.Problem {
	var in struct {
		Amount *float64 `json:"amount"`
	}
	if json.Unmarshal(args, &in) != nil || in.Amount == nil {
		return nil // the schema refuses it
	}
	if *in.Amount == 0 {
		return []runtimes.Problem{{Path: "amount", Constraint: "not_zero", Message: "a trade buys (amount > 0) or sells (amount < 0) shares, not 0"}}
	}
	return nil
}
