package schema

import (
	"fmt"
	"sort"
	"strings"
)

// View is an aggregation view over a type's signals, declared in its schema
// document under "views" (docs/leaderboards.md): a new leaderboard is a new
// entry there, never code. internal/views computes them.
type View struct {
	// Kind is how the view aggregates: ViewElo, ViewDecayWeighted, ViewBrier
	// or ViewMarket.
	Kind string `json:"kind"`
	// Signal is the signal kind it reads (declared under signals).
	Signal string `json:"signal"`
	// Dimension is the dimension a decay_weighted view counts; defaulted when
	// the signal kind has one.
	Dimension string `json:"dimension,omitempty"`
	// KFactor is how far one Elo game moves a rating.
	KFactor float64 `json:"k_factor,omitempty"`
	// InitialRating is a rating before any game (DefaultInitialRating when 0).
	InitialRating float64 `json:"initial_rating,omitempty"`
	// HalfLifeHours is the age at which a decay_weighted signal counts half.
	HalfLifeHours float64 `json:"half_life_hours,omitempty"`
	Description   string  `json:"description,omitempty"`
}

// The view kinds.
const (
	ViewElo           = "elo"
	ViewDecayWeighted = "decay_weighted"
	ViewBrier         = "brier"
	// ViewMarket ranks by the YES price of the LMSR market over a kind with
	// a liquidity: 1 / (1 + e^((q_no - q_yes) / b)), q the sums of its trades.
	ViewMarket = "market"
)

// DefaultInitialRating is an Elo rating before any game.
const DefaultInitialRating = 1500

// Initial returns the view's rating before any game.
func (v View) Initial() float64 {
	if v.InitialRating == 0 {
		return DefaultInitialRating
	}
	return v.InitialRating
}

// ViewNames returns the declared views in a stable order.
func (d *Document) ViewNames() []string {
	names := make([]string, 0, len(d.Views))
	for n := range d.Views {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// checkViews says what is wrong with the document's views beyond what the
// meta-schema says: each names a declared signal of the shape its kind needs,
// and the parameters its kind needs (and only those).
func (d *Document) checkViews() []string {
	var out []string
	for _, name := range d.ViewNames() {
		v := d.Views[name]
		at := "views." + name
		rule, ok := d.Signals[v.Signal]
		if !ok {
			out = append(out, fmt.Sprintf("%s.signal: %q is not a declared signal kind (declared: %s)", at, v.Signal, strings.Join(d.SignalKinds(), ", ")))
			continue
		}
		unwanted := func(field string, set bool) {
			if set {
				out = append(out, fmt.Sprintf("%s.%s: a %s view takes no %s", at, field, v.Kind, field))
			}
		}
		switch v.Kind {
		case ViewElo:
			if !rule.Opponent {
				out = append(out, fmt.Sprintf("%s.signal: an elo view reads duels, and signals.%s does not declare \"opponent\": true", at, v.Signal))
			}
			if !(v.KFactor > 0) {
				out = append(out, fmt.Sprintf("%s.k_factor: an elo view needs a K-factor above 0 (got %g)", at, v.KFactor))
			}
			unwanted("half_life_hours", v.HalfLifeHours != 0)
			unwanted("dimension", v.Dimension != "")
		case ViewDecayWeighted:
			if !(v.HalfLifeHours > 0) {
				out = append(out, fmt.Sprintf("%s.half_life_hours: a decay_weighted view needs a half-life above 0 hours (got %g)", at, v.HalfLifeHours))
			}
			switch {
			case v.Dimension != "" && !contains(rule.Dimensions, v.Dimension):
				out = append(out, fmt.Sprintf("%s.dimension: %q is not a dimension of signals.%s (%s)", at, v.Dimension, v.Signal, strings.Join(rule.Dimensions, ", ")))
			case v.Dimension == "" && len(rule.Dimensions) > 1:
				out = append(out, fmt.Sprintf("%s.dimension: signals.%s has the dimensions %s; name the one the view counts", at, v.Signal, strings.Join(rule.Dimensions, ", ")))
			}
			unwanted("k_factor", v.KFactor != 0)
			unwanted("initial_rating", v.InitialRating != 0)
		case ViewBrier:
			if len(rule.Outcomes) == 0 {
				out = append(out, fmt.Sprintf("%s.signal: a brier view scores forecasts, and signals.%s declares no outcomes", at, v.Signal))
			}
			unwanted("k_factor", v.KFactor != 0)
			unwanted("initial_rating", v.InitialRating != 0)
			unwanted("half_life_hours", v.HalfLifeHours != 0)
			unwanted("dimension", v.Dimension != "")
		case ViewMarket:
			if !(rule.Liquidity > 0) {
				out = append(out, fmt.Sprintf("%s.signal: a market view prices trades, and signals.%s declares no liquidity", at, v.Signal))
			}
			unwanted("k_factor", v.KFactor != 0)
			unwanted("initial_rating", v.InitialRating != 0)
			unwanted("half_life_hours", v.HalfLifeHours != 0)
			unwanted("dimension", v.Dimension != "")
		default:
			out = append(out, fmt.Sprintf("%s.kind: %q is not a view kind (elo, decay_weighted, brier or market)", at, v.Kind))
		}
	}
	for _, kind := range d.SignalKinds() {
		rule := d.Signals[kind]
		for _, role := range rule.Roles {
			if role != RoleContributor && role != RoleReviewer && role != RoleAdmin {
				out = append(out, fmt.Sprintf("signals.%s.roles: %q is not a permission (contributor, reviewer or admin)", kind, role))
			}
		}
		if rule.Opponent && (len(rule.ValueRange) != 2 || rule.ValueRange[0] == nil || rule.ValueRange[1] == nil || *rule.ValueRange[0] < 0 || *rule.ValueRange[1] > 1) {
			out = append(out, fmt.Sprintf("signals.%s.value_range: a duel's value is the signalled artifact's score, so its range lies within [0, 1]", kind))
		}
		if rule.Liquidity != 0 {
			if !(rule.Liquidity > 0) || rule.Liquidity > 1e9 {
				out = append(out, fmt.Sprintf("signals.%s.liquidity: an LMSR market's liquidity b is a number of shares above 0 and at most 1e9 (got %g)", kind, rule.Liquidity))
			}
			if len(rule.Dimensions) != 2 || !contains(rule.Dimensions, "yes") || !contains(rule.Dimensions, "no") {
				out = append(out, fmt.Sprintf("signals.%s.dimensions: a market's trades have the dimensions yes and no (got %s)", kind, strings.Join(rule.Dimensions, ", ")))
			}
			if !rule.ServerOnly {
				out = append(out, fmt.Sprintf("signals.%s.server_only: a market's trades are priced by the server, so the kind is server_only", kind))
			}
			if rule.Aggregation != "sum" {
				out = append(out, fmt.Sprintf("signals.%s.aggregation: a market's quantities are the sums of its trades, so the kind is sum (got %s)", kind, rule.Aggregation))
			}
		}
		if rule.Opponent && rule.Aggregation == "sum" {
			out = append(out, fmt.Sprintf("signals.%s.aggregation: a duel kind is replace (each judge's latest verdict on a pair counts) or append (every game counts), not sum", kind))
		}
	}
	return out
}

// ViewDimension returns the dimension a decay_weighted view counts.
func (d *Document) ViewDimension(v View) string {
	if v.Dimension != "" {
		return v.Dimension
	}
	if dims := d.Signals[v.Signal].Dimensions; len(dims) == 1 {
		return dims[0]
	}
	return "default"
}
