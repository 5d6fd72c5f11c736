// Package views computes the aggregation views schema documents declare over
// signals (SPEC-001 §10.3, §10.5; docs/leaderboards.md): Elo ratings from duel
// signals, decay-weighted ranks, and forecasters' Brier scores, each a
// leaderboard paged by keyset cursors.
//
// A view is data: a block under the document's "views" naming its kind (elo,
// decay_weighted, brier), the signal kind it reads and its parameters
// (schema.View). Nothing here branches on a type or view name.
//
// Contract:
//   - A page costs a constant number of statements: for elo, the freshness
//     check and the page (plus, when the cache is stale, one recomputation of
//     fixed statements); for decay_weighted and brier, the page alone. What a
//     client asks of the entries' artifacts is loaded per page by the
//     resolvers' loaders.
//   - Elo ratings depend on every duel in order, so they are cached per view
//     (view_cache, view_scores) and recomputed lazily, in full, by the first
//     read that finds the duels changed (their count or newest id) or the
//     view's declaration changed (its fingerprint).
//   - Decay-weighted and Brier pages are computed on read as of a time (asOf),
//     which the cursor keeps, so later pages rank what the first one did.
//   - Only what the request's actor may read is ranked (store.privateSQL's rule).
package views

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/schema"
	"github.com/scidex/substrate/internal/store"
)

// MaxFirst is the largest page a leaderboard serves; DefaultFirst the page
// when none is asked for.
const (
	MaxFirst     = 100
	DefaultFirst = 20
)

// Views computes the views of the types in a store's registry.
type Views struct {
	s *store.Store
	q *dbsqlc.Queries
}

// New returns the views over s.
func New(s *store.Store) *Views {
	return &Views{s: s, q: dbsqlc.New(s.Pool())}
}

// Declared is a view as its type's current schema declares it.
type Declared struct {
	Type *schema.Type
	Name string
	View schema.View
	Rule schema.SignalRule
}

// Find returns the view name of type typ, refusing an unknown type or view
// (naming the ones declared) and, when kinds are given, a view of another kind.
func (v *Views) Find(ctx context.Context, typ, name string, kinds ...string) (*Declared, error) {
	t, err := v.s.Registry().Get(ctx, typ)
	if errors.Is(err, schema.ErrUnknownType) {
		return nil, problem.Invalid(problem.Field("type", "declared", fmt.Sprintf("there is no artifact type %q", typ), typ))
	}
	if err != nil {
		return nil, err
	}
	names := t.Doc.ViewNames()
	matching := names
	if len(kinds) > 0 {
		matching = nil
		for _, n := range names {
			if contains(kinds, t.Doc.Views[n].Kind) {
				matching = append(matching, n)
			}
		}
	}
	decl, ok := t.Doc.Views[name]
	if !ok || (len(kinds) > 0 && !contains(kinds, decl.Kind)) {
		what := "views"
		if len(kinds) > 0 {
			what = strings.Join(kinds, " or ") + " views"
		}
		msg := fmt.Sprintf("%s declares no view %q", t.Name(), name)
		if ok {
			msg = fmt.Sprintf("%s's view %q is a %s view, and this reads %s", t.Name(), name, decl.Kind, what)
		}
		if len(matching) > 0 {
			msg += fmt.Sprintf("; its %s: %s", what, strings.Join(matching, ", "))
		} else {
			msg += fmt.Sprintf("; its schema declares no %s (views in the schema document, docs/leaderboards.md)", what)
		}
		return nil, problem.Invalid(problem.Field("view", "declared", msg, name))
	}
	return &Declared{Type: t, Name: name, View: decl, Rule: t.Doc.Signals[decl.Signal]}, nil
}

// Params is a leaderboard page's request.
type Params struct {
	Type, View string
	// First is the page size (DefaultFirst when nil), 1 to MaxFirst.
	First *int
	// After is the previous page's end cursor.
	After string
	// AsOf is when decay_weighted and brier views are computed at (default
	// the request's time); a cursor's own wins.
	AsOf *time.Time
}

// Entry is one place on a leaderboard: an artifact (ArtifactPK) or, for a
// brier view, a forecaster (ActorID).
type Entry struct {
	Rank       int
	Score      float64
	Count      int
	ArtifactPK int64
	ActorID    string
	// Wins, Losses and Draws are an elo entry's games.
	Wins, Losses, Draws int
	Cursor              string
}

// Page is one page of a leaderboard.
type Page struct {
	*Declared
	AsOf    time.Time
	Entries []Entry
	HasNext bool
}

// cursor is a leaderboard position: the last entry's score, subject and rank,
// the view it belongs to and the time the first page was computed as of.
type cursor struct {
	Type  string  `json:"t"`
	View  string  `json:"v"`
	Score float64 `json:"s"`
	PK    int64   `json:"k,omitempty"`
	Actor string  `json:"a,omitempty"`
	Rank  int     `json:"r"`
	AsOf  int64   `json:"at"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return "lb:" + base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s, typ, view string) (*cursor, error) {
	bad := func(msg string) error {
		return problem.Invalid(problem.Field("after", "cursor", msg, s))
	}
	raw, ok := strings.CutPrefix(s, "lb:")
	if !ok {
		return nil, bad("is not a leaderboard cursor: pass an endCursor of this leaderboard unchanged")
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	var c cursor
	if err != nil || json.Unmarshal(b, &c) != nil || c.Rank < 1 || math.IsNaN(c.Score) {
		return nil, bad("is not a leaderboard cursor: pass an endCursor of this leaderboard unchanged")
	}
	if c.Type != typ || c.View != view {
		return nil, bad(fmt.Sprintf("is a cursor of the leaderboard %s/%s, not %s/%s", c.Type, c.View, typ, view))
	}
	return &c, nil
}

// Leaderboard returns one page of a view, best first.
func (v *Views) Leaderboard(ctx context.Context, p Params) (*Page, error) {
	first := DefaultFirst
	if p.First != nil {
		first = *p.First
	}
	if first < 1 || first > MaxFirst {
		return nil, problem.Invalid(problem.Field("first", "range",
			fmt.Sprintf("a leaderboard page holds 1 to %d entries; page on with after", MaxFirst), first))
	}
	d, err := v.Find(ctx, p.Type, p.View)
	if err != nil {
		return nil, err
	}
	var after *cursor
	if p.After != "" {
		if after, err = decodeCursor(p.After, p.Type, p.View); err != nil {
			return nil, err
		}
	}
	asOf := requestNow(ctx)
	switch {
	case after != nil:
		asOf = time.Unix(0, after.AsOf).UTC()
	case p.AsOf != nil:
		asOf = p.AsOf.UTC().Truncate(time.Microsecond)
	}
	page := &Page{Declared: d, AsOf: asOf}
	admin, actor := visibility(ctx)
	lim := int32(first + 1)
	var afterScore *float64
	var afterPK int64
	var afterActor string
	rank := 0
	if after != nil {
		afterScore, afterPK, afterActor, rank = &after.Score, after.PK, after.Actor, after.Rank
	}
	switch d.View.Kind {
	case schema.ViewElo:
		if err := v.ensureElo(ctx, d); err != nil {
			return nil, err
		}
		rows, err := v.q.ViewEloPage(ctx, dbsqlc.ViewEloPageParams{Type: p.Type, View: p.View, AfterScore: afterScore, AfterPk: afterPK,
			Admin: admin, Actor: actor, Lim: lim})
		if err != nil {
			return nil, fmt.Errorf("elo page %s/%s: %w", p.Type, p.View, err)
		}
		for _, r := range rows {
			page.Entries = append(page.Entries, Entry{Score: r.Score, Count: int(r.Games), ArtifactPK: r.ArtifactPk,
				Wins: int(r.Wins), Losses: int(r.Losses), Draws: int(r.Draws)})
		}
	case schema.ViewDecayWeighted:
		rows, err := v.q.ViewDecayPage(ctx, dbsqlc.ViewDecayPageParams{AfterScore: afterScore, AfterPk: afterPK, Admin: admin, Actor: actor,
			Lim: lim, AsOf: asOf, HalfLifeHours: d.View.HalfLifeHours, Type: p.Type, Kind: d.View.Signal,
			Dimension: d.Type.Doc.ViewDimension(d.View), LatestOnly: d.Rule.Aggregation == "replace"})
		if err != nil {
			return nil, fmt.Errorf("decay page %s/%s: %w", p.Type, p.View, err)
		}
		for _, r := range rows {
			page.Entries = append(page.Entries, Entry{Score: r.Score, Count: int(r.N), ArtifactPK: r.ArtifactPk})
		}
	case schema.ViewMarket:
		rows, err := v.q.ViewMarketPage(ctx, dbsqlc.ViewMarketPageParams{AfterScore: afterScore, AfterPk: afterPK, Admin: admin, Actor: actor,
			Lim: lim, AsOf: asOf, Liquidity: d.Rule.Liquidity, Type: p.Type, Kind: d.View.Signal})
		if err != nil {
			return nil, fmt.Errorf("market page %s/%s: %w", p.Type, p.View, err)
		}
		for _, r := range rows {
			page.Entries = append(page.Entries, Entry{Score: r.Score, Count: int(r.N), ArtifactPK: r.ArtifactPk})
		}
	case schema.ViewBrier:
		states, outcomes := resolutions(d.Rule)
		rows, err := v.q.ViewBrierPage(ctx, dbsqlc.ViewBrierPageParams{AfterScore: afterScore, AfterVoter: afterActor, Lim: lim,
			States: states, Outcomes: outcomes, Type: p.Type, Kind: d.View.Signal, AsOf: asOf, Admin: admin, Actor: actor})
		if err != nil {
			return nil, fmt.Errorf("brier page %s/%s: %w", p.Type, p.View, err)
		}
		for _, r := range rows {
			page.Entries = append(page.Entries, Entry{Score: r.Score, Count: int(r.N), ActorID: r.Voter})
		}
	}
	if len(page.Entries) > first {
		page.Entries, page.HasNext = page.Entries[:first], true
	}
	for i := range page.Entries {
		e := &page.Entries[i]
		rank++
		e.Rank = rank
		e.Cursor = cursor{Type: p.Type, View: p.View, Score: e.Score, PK: e.ArtifactPK, Actor: e.ActorID, Rank: rank, AsOf: asOf.UnixNano()}.encode()
	}
	return page, nil
}

// resolutions returns a forecast kind's resolving states and their outcomes,
// in a stable order.
func resolutions(rule schema.SignalRule) ([]string, []float64) {
	states := make([]string, 0, len(rule.Outcomes))
	for s := range rule.Outcomes {
		states = append(states, s)
	}
	sort.Strings(states)
	outcomes := make([]float64, len(states))
	for i, s := range states {
		outcomes[i] = rule.Outcomes[s]
	}
	return states, outcomes
}

// visibility returns whether the request's actor reads everything (admin)
// and its id ("" when anonymous).
func visibility(ctx context.Context) (bool, string) {
	rc := request.From(ctx)
	if rc == nil {
		return false, ""
	}
	if rc.Actor.Has(auth.PermAdmin) {
		return true, rc.Actor.ID
	}
	if rc.Anonymous {
		return false, ""
	}
	return false, rc.Actor.ID
}

// requestNow is the request's frozen time, at the database's precision.
func requestNow(ctx context.Context) time.Time {
	now := time.Now()
	if rc := request.From(ctx); rc != nil && !rc.Now.IsZero() {
		now = rc.Now
	}
	return now.UTC().Truncate(time.Microsecond)
}

// Rating is an artifact's Elo rating in one view; Rank is 0 before its first game.
type Rating struct {
	*Declared
	Rating                     float64
	Rank                       int
	Games, Wins, Losses, Draws int
}

// Elo returns artifact a's rating in the elo view name of its type.
func (v *Views) Elo(ctx context.Context, a *store.Artifact, name string) (*Rating, error) {
	d, err := v.Find(ctx, a.Type, name, schema.ViewElo)
	if err != nil {
		return nil, err
	}
	if err := v.ensureElo(ctx, d); err != nil {
		return nil, err
	}
	row, err := v.q.ViewEloOne(ctx, a.Type, name, a.PK)
	if errors.Is(err, pgx.ErrNoRows) {
		return &Rating{Declared: d, Rating: d.View.Initial()}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("elo rating of %s in %s: %w", a.Unpinned(), name, err)
	}
	return &Rating{Declared: d, Rating: row.Score, Rank: int(row.Rank), Games: int(row.Games), Wins: int(row.Wins),
		Losses: int(row.Losses), Draws: int(row.Draws)}, nil
}

// Point is one forecast of a calibration trace.
type Point struct {
	Forecaster  string
	Probability float64
	At          time.Time
	// Brier and Running are nil while the artifact is unresolved.
	Brier, Running *float64
}

// Trace is an artifact's calibration trace in one brier view.
type Trace struct {
	*Declared
	State   *string
	Outcome *float64
	Brier   *float64
	Points  []Point
}

// BrierTrace returns artifact a's forecasts, oldest first, scored against the
// outcome its lifecycle state resolves to (if it has resolved). An empty name
// picks the one brier view of a's type.
func (v *Views) BrierTrace(ctx context.Context, a *store.Artifact, name string) (*Trace, error) {
	if name == "" {
		t, err := v.s.Registry().Get(ctx, a.Type)
		if err != nil {
			return nil, err
		}
		for _, n := range t.Doc.ViewNames() {
			if t.Doc.Views[n].Kind == schema.ViewBrier {
				name = n
				break
			}
		}
	}
	d, err := v.Find(ctx, a.Type, name, schema.ViewBrier)
	if err != nil {
		return nil, err
	}
	hist, err := v.s.SignalHistory(ctx, []int64{a.PK}, d.View.Signal)
	if err != nil {
		return nil, err
	}
	tr := &Trace{Declared: d, State: a.LifecycleState, Points: []Point{}}
	if a.LifecycleState != nil {
		if o, ok := d.Rule.Outcomes[*a.LifecycleState]; ok {
			tr.Outcome = &o
		}
	}
	sum := 0.0
	for i, h := range hist[a.PK] {
		p := Point{Forecaster: h.Voter, Probability: h.Value, At: h.At}
		if tr.Outcome != nil {
			b := (h.Value - *tr.Outcome) * (h.Value - *tr.Outcome)
			sum += b
			run := sum / float64(i+1)
			p.Brier, p.Running = &b, &run
		}
		tr.Points = append(tr.Points, p)
	}
	if tr.Outcome != nil && len(tr.Points) > 0 {
		mean := sum / float64(len(tr.Points))
		tr.Brier = &mean
	}
	return tr, nil
}

// fingerprint identifies what an elo view's ratings are computed by: its
// declaration and its duel kind's aggregation.
func fingerprint(d *Declared) string {
	b, _ := json.Marshal(struct {
		View        schema.View `json:"view"`
		Aggregation string      `json:"aggregation"`
	}{d.View, d.Rule.Aggregation})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
