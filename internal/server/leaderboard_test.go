package server_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/server"
	"github.com/scidex/substrate/internal/store"
)

// botViews are the views of the bot type: two elo views over one kind of
// duel with different K-factors, one over a kind only reviewers judge, a
// decay-weighted rank of votes, a Brier view of forecasts.
func botViews(eloK float64) map[string]any {
	return map[string]any{
		"elo":        map[string]any{"kind": "elo", "signal": "duel", "k_factor": eloK, "description": "Every game counts."},
		"elo16":      map[string]any{"kind": "elo", "signal": "duel", "k_factor": 16, "initial_rating": 1000, "description": "Slow ratings from 1000."},
		"judged_elo": map[string]any{"kind": "elo", "signal": "judged", "k_factor": 32, "description": "Only reviewers judge."},
		"hot":        map[string]any{"kind": "decay_weighted", "signal": "vote", "half_life_hours": 24, "description": "Votes, halving daily."},
		"calib":      map[string]any{"kind": "brier", "signal": "calibration", "description": "Forecasters of games."},
	}
}

// botSchema is a type registered at run time whose leaderboards are all data
// in its document.
func botSchema(version int, views map[string]any) map[string]any {
	duel := func(agg string) map[string]any {
		return map[string]any{"dimensions": []string{"default"}, "value_range": []any{0, 1}, "values": []any{0, 0.5, 1},
			"aggregation": agg, "opponent": true, "description": "A game against another bot: 1 won, 0.5 drawn, 0 lost."}
	}
	judged := duel("replace")
	judged["roles"] = []string{"reviewer"}
	return map[string]any{"type": "schema", "id": "bot", "title": "Bot", "content": map[string]any{
		"type": "bot", "schema_version": version, "title": "Bot", "description": "A game-playing bot.",
		"id_strategy": "client", "mutability": "mutable_with_history", "lock_mode": "optimistic",
		"content_schema": map[string]any{"type": "object", "properties": map[string]any{}},
		"links":          map[string]any{},
		"signals": map[string]any{
			"duel":   duel("append"),
			"judged": judged,
			"vote": map[string]any{"dimensions": []string{"default"}, "value_range": []any{-1, 1}, "values": []any{-1, 1},
				"aggregation": "replace", "description": "Up or down."},
			"calibration": map[string]any{"dimensions": []string{"default"}, "value_range": []any{0, 1}, "aggregation": "append",
				"outcomes": map[string]any{"won": 1, "lost": 0}, "description": "The chance the bot wins its season."},
		},
		"views": views,
		"lifecycle": map[string]any{"initial": "playing", "states": []string{"playing", "won", "lost"},
			"transitions": []any{map[string]any{"from": "playing", "to": "won", "roles": []string{"reviewer"}},
				map[string]any{"from": "playing", "to": "lost", "roles": []string{"reviewer"}}}},
		"validators": []string{"lifecycle_transition_allowed", "actor_authorized_for_lifecycle"},
		"merge":      map[string]any{"text_fields": []any{}, "append_only_arrays": []any{}},
		"examples":   []any{map[string]any{"id": "example", "title": "b", "content": map[string]any{}}},
	}}
}

func registerBots(t *testing.T, env *apitest.Env) (reviewer string) {
	t.Helper()
	reviewer = apitest.Token(t, "rosalind", auth.PermReviewer)
	mustWrite(t, env, reviewer, "createArtifact", "CreateArtifactInput", botSchema(1, botViews(32)))
	return reviewer
}

func bot(t *testing.T, env *apitest.Env, tok, id string) result {
	t.Helper()
	return mustWrite(t, env, tok, "createArtifact", "CreateArtifactInput", map[string]any{"type": "bot", "id": id, "title": "bot " + id, "content": map[string]any{}})
}

func duel(t *testing.T, env *apitest.Env, tok, kind, a, b string, score float64) result {
	t.Helper()
	return mutate(t, env, tok, "addSignal", "AddSignalInput", map[string]any{"ref": "bot:" + a, "opponent": "bot:" + b, "kind": kind, "value": score})
}

type board struct {
	Leaderboard struct {
		Kind, Description string
		Parameters        map[string]any
		AsOf              time.Time
		Edges             []struct {
			Cursor string
			Node   struct {
				Rank                int
				Score               float64
				Count               int
				Wins, Losses, Draws *int
				Artifact            *struct{ ID, Title string }
				Actor               *struct{ ID string }
			}
		}
		PageInfo struct {
			HasNextPage bool
			EndCursor   *string
		}
	}
}

const boardQuery = `query($t: String!, $v: String!, $n: Int, $a: Cursor, $at: DateTime) {
  leaderboard(type: $t, view: $v, first: $n, after: $a, asOf: $at) {
    kind description parameters asOf
    edges { cursor node { rank score count wins losses draws artifact { id title } actor { id } } }
    pageInfo { hasNextPage endCursor } } }`

func leaderboard(t *testing.T, env *apitest.Env, tok, typ, view string, vars map[string]any) (board, *apitest.Response) {
	t.Helper()
	v := map[string]any{"t": typ, "v": view}
	for k, x := range vars {
		v[k] = x
	}
	r := env.Post(t, tok, boardQuery, v)
	var b board
	if len(r.Errors) == 0 {
		if err := jsonUnmarshal(r.Data, &b); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range b.Leaderboard.Edges {
		if a := e.Node.Artifact; a != nil {
			a.ID = strings.TrimPrefix(a.ID, typ+":") // the artifact's id is its node id, <type>:<id>
		}
	}
	return b, r
}

// ratings reads a whole elo board as id -> entry.
func ratings(t *testing.T, env *apitest.Env, tok, view string) (order []string, score map[string]float64, games map[string][3]int) {
	t.Helper()
	b, r := leaderboard(t, env, tok, "bot", view, map[string]any{"n": 100})
	if len(r.Errors) > 0 {
		t.Fatalf("leaderboard %s: %s", view, r.Raw)
	}
	score, games = map[string]float64{}, map[string][3]int{}
	for i, e := range b.Leaderboard.Edges {
		n := e.Node
		if n.Rank != i+1 || n.Artifact == nil || n.Wins == nil {
			t.Fatalf("entry %d: %+v", i, n)
		}
		order = append(order, n.Artifact.ID)
		score[n.Artifact.ID] = n.Score
		games[n.Artifact.ID] = [3]int{*n.Wins, *n.Losses, *n.Draws}
		if n.Count != *n.Wins+*n.Losses+*n.Draws {
			t.Errorf("%s: %d games, %d+%d+%d results", n.Artifact.ID, n.Count, *n.Wins, *n.Losses, *n.Draws)
		}
	}
	return order, score, games
}

func closeTo(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Ratings follow the Elo sequence worked by hand, with the K-factor and
// initial rating each view declares; a draw moves the favourite down; a game
// recorded from the loser's side counts the same; changing K in the schema
// recomputes the cached ratings, and so does a new game.
func TestLeaderboardElo(t *testing.T) {
	env := apitest.New(t)
	reviewer := registerBots(t, env)
	ada := apitest.Contributor(t, "ada")
	for _, id := range []string{"a", "b", "c"} {
		bot(t, env, ada, id)
	}
	// K = 32 from 1500. 1: a beats b, E = 0.5: a 1516, b 1484.
	// 2: a draws c, E(a) = 1/(1+10^((1500-1516)/400)) = 0.523012: a 1515.26362, c 1500.73638.
	// 3: c beats b; 4: b beats a; 5: c loses to a (recorded on c, value 0).
	for _, g := range []struct {
		a, b  string
		score float64
	}{{"a", "b", 1}, {"a", "c", 0.5}, {"c", "b", 1}, {"b", "a", 1}, {"c", "a", 0}} {
		if r := duel(t, env, ada, "duel", g.a, g.b, g.score); r.Typename != "WriteSuccess" {
			t.Fatalf("duel %+v: %+v", g, r)
		}
	}
	order, score, games := ratings(t, env, ada, "elo")
	want := map[string]float64{"a": 1514.0016221680676, "b": 1486.8985572808317, "c": 1499.0998205511007}
	if strings.Join(order, ",") != "a,c,b" {
		t.Errorf("order %v, want a,c,b", order)
	}
	for id, w := range want {
		if !closeTo(score[id], w) {
			t.Errorf("elo %s = %.10f, want %.10f", id, score[id], w)
		}
	}
	if games["a"] != [3]int{2, 1, 1} || games["b"] != [3]int{1, 2, 0} || games["c"] != [3]int{1, 1, 1} {
		t.Errorf("wins/losses/draws: %v", games)
	}

	// The same games under elo16: K = 16 from 1000, as its declaration says.
	_, score16, _ := ratings(t, env, ada, "elo16")
	for id, w := range map[string]float64{"a": 1007.4734371041454, "b": 992.7316168909368, "c": 999.7949460049177} {
		if !closeTo(score16[id], w) {
			t.Errorf("elo16 %s = %.10f, want %.10f", id, score16[id], w)
		}
	}
	var one struct {
		EloRating *struct {
			Ref, View                  string
			Rating, KFactor            float64
			Rank                       *int
			Games, Wins, Losses, Draws int
		}
	}
	env.OK(t, ada, `{ eloRating(ref: "bot:c", view: "elo") { ref view rating kFactor rank games wins losses draws } }`, nil, &one)
	if e := one.EloRating; e == nil || e.Ref != "bot:c" || !closeTo(e.Rating, want["c"]) || e.KFactor != 32 || e.Rank == nil || *e.Rank != 2 ||
		e.Games != 3 || e.Wins != 1 || e.Losses != 1 || e.Draws != 1 {
		t.Errorf("eloRating(bot:c): %+v", e)
	}
	bot(t, env, ada, "rookie")
	env.OK(t, ada, `{ eloRating(ref: "bot:rookie", view: "elo16") { ref view rating kFactor rank games wins losses draws } }`, nil, &one)
	if e := one.EloRating; e == nil || e.Rating != 1000 || e.Rank != nil || e.Games != 0 {
		t.Errorf("an unplayed bot: %+v", e)
	}

	// K from the schema: a new version with K = 24 recomputes the cache.
	var cur struct{ Artifact struct{ ContentHash string } }
	env.OK(t, ada, `{ artifact(ref: "schema:bot") { contentHash } }`, nil, &cur)
	next := botSchema(2, botViews(24))
	mustWrite(t, env, reviewer, "updateArtifact", "UpdateArtifactInput", map[string]any{"ref": "schema:bot",
		"baseContentHash": cur.Artifact.ContentHash, "content": next["content"]})
	_, score24, _ := ratings(t, env, ada, "elo")
	for id, w := range map[string]float64{"a": 1510.8453817199563, "b": 1489.6387481924858, "c": 1499.515870087558} {
		if !closeTo(score24[id], w) {
			t.Errorf("elo at K=24 %s = %.10f, want %.10f", id, score24[id], w)
		}
	}
	// A new game is seen at the next read: b draws c.
	if r := duel(t, env, ada, "duel", "b", "c", 0.5); r.Typename != "WriteSuccess" {
		t.Fatalf("draw: %+v", r)
	}
	_, score6, games6 := ratings(t, env, ada, "elo")
	for id, w := range map[string]float64{"a": 1510.8453817199563, "b": 1489.979800024031, "c": 1499.1748182560127} {
		if !closeTo(score6[id], w) {
			t.Errorf("after the draw, elo %s = %.10f, want %.10f", id, score6[id], w)
		}
	}
	if games6["b"][2] != 1 || games6["c"][2] != 2 {
		t.Errorf("draws after b-c: %v", games6)
	}
}

// at writes a signal through the store as if at a chosen time, so ages are
// exact; everything else is the write path of addSignal.
func at(t *testing.T, env *apitest.Env, voter string, when time.Time, p store.SignalParams) {
	t.Helper()
	rc := &request.Context{Actor: auth.Actor{ID: voter, Kind: auth.KindHuman, Permissions: []auth.Permission{auth.PermContributor}},
		RequestID: request.NewID(), Now: request.Clock(when)}
	if _, err := env.Store.AddSignal(request.With(context.Background(), rc), p); err != nil {
		t.Fatalf("signal %+v at %s: %v", p, when, err)
	}
}

// A decay-weighted rank as of a fixed time matches the sum worked by hand:
// value × weight × 0.5^(age/24h), each voter's latest vote (votes replace),
// nothing after asOf.
func TestLeaderboardDecay(t *testing.T) {
	env := apitest.New(t)
	registerBots(t, env)
	ada := apitest.Contributor(t, "ada")
	for _, id := range []string{"a", "b", "c"} {
		bot(t, env, ada, id)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	two := 2.0
	vote := func(voter, id string, v float64, age time.Duration, w *float64) {
		at(t, env, voter, t0.Add(-age), store.SignalParams{Ref: "bot:" + id, Kind: "vote", Value: v, Weight: w})
	}
	vote("v1", "a", 1, 48*time.Hour, nil) // 0.25
	vote("v2", "a", 1, 24*time.Hour, nil) // 0.5
	vote("v1", "b", 1, time.Hour, nil)    // 0.5^(1/24) = 0.971532
	vote("v3", "b", -1, 72*time.Hour, &two)
	vote("v1", "c", 1, 100*time.Hour, nil) // replaced by v1's later vote
	vote("v1", "c", -1, 2*time.Hour, nil)
	vote("v2", "c", 1, -time.Hour, nil) // after asOf: not counted
	want := map[string]float64{
		"a": 0.25 + 0.5,
		"b": math.Pow(0.5, 1.0/24) - 2*0.125,
		"c": -math.Pow(0.5, 2.0/24),
	}
	b, r := leaderboard(t, env, ada, "bot", "hot", map[string]any{"at": t0.Format(time.RFC3339)})
	if len(r.Errors) > 0 {
		t.Fatalf("%s", r.Raw)
	}
	var order []string
	for _, e := range b.Leaderboard.Edges {
		order = append(order, e.Node.Artifact.ID)
		if math.Abs(e.Node.Score-want[e.Node.Artifact.ID]) > 1e-8 {
			t.Errorf("hot %s = %.10f, want %.10f", e.Node.Artifact.ID, e.Node.Score, want[e.Node.Artifact.ID])
		}
	}
	if strings.Join(order, ",") != "a,b,c" {
		t.Errorf("order %v, want a,b,c (b's weighted old down vote costs it the lead)", order)
	}
	if b.Leaderboard.Kind != "DECAY_WEIGHTED" || b.Leaderboard.Parameters["half_life_hours"] != float64(24) || !b.Leaderboard.AsOf.Equal(t0) {
		t.Errorf("board: kind %s parameters %v asOf %s", b.Leaderboard.Kind, b.Leaderboard.Parameters, b.Leaderboard.AsOf)
	}
	counts := map[string]int{}
	for _, e := range b.Leaderboard.Edges {
		counts[e.Node.Artifact.ID] = e.Node.Count
	}
	if counts["a"] != 2 || counts["b"] != 2 || counts["c"] != 1 {
		t.Errorf("counted signals %v, want a 2, b 2, c 1", counts)
	}
	// A day later everything counts half as much, and c's future vote has come.
	b, _ = leaderboard(t, env, ada, "bot", "hot", map[string]any{"at": t0.Add(24 * time.Hour).Format(time.RFC3339)})
	for _, e := range b.Leaderboard.Edges {
		w := want[e.Node.Artifact.ID] / 2
		if e.Node.Artifact.ID == "c" {
			w += math.Pow(0.5, 23.0/24)
		}
		if math.Abs(e.Node.Score-w) > 1e-8 {
			t.Errorf("a day later, hot %s = %.10f, want %.10f", e.Node.Artifact.ID, e.Node.Score, w)
		}
	}
}

// The calibration trace of a forecast artifact: unscored until it resolves,
// then each forecast's (p - outcome)² and the running mean; the brier board
// ranks forecasters by their mean over resolved bots, best first.
func TestBrierScoreHistory(t *testing.T) {
	env := apitest.New(t)
	reviewer := registerBots(t, env)
	ada := apitest.Contributor(t, "ada")
	a, b := bot(t, env, ada, "a"), bot(t, env, ada, "b")
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, f := range []struct {
		who, id string
		p       float64
	}{{"f1", "a", 0.9}, {"f2", "a", 0.4}, {"f1", "a", 0.7}, {"f2", "b", 0.2}, {"f3", "b", 0.5}} {
		at(t, env, f.who, t0.Add(time.Duration(i)*time.Hour), store.SignalParams{Ref: "bot:" + f.id, Kind: "calibration", Value: f.p})
	}
	type trace struct {
		BrierScoreHistory *struct {
			Ref, View  string
			State      *string
			Outcome    *float64
			BrierScore *float64
			Points     []struct {
				Forecaster        struct{ ID string }
				Probability       float64
				At                time.Time
				BrierScore        *float64
				RunningBrierScore *float64
			}
		}
	}
	q := `query($r: Ref!) { brierScoreHistory(ref: $r) { ref view state outcome brierScore
	  points { forecaster { id } probability at brierScore runningBrierScore } } }`
	var before trace
	env.OK(t, ada, q, map[string]any{"r": "bot:a"}, &before)
	if h := before.BrierScoreHistory; h == nil || h.View != "calib" || h.Outcome != nil || h.BrierScore != nil || len(h.Points) != 3 ||
		h.Points[0].BrierScore != nil || h.Points[1].Forecaster.ID != "f2" || !h.Points[2].At.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("before resolution: %+v", h)
	}
	mustWrite(t, env, reviewer, "updateArtifact", "UpdateArtifactInput", map[string]any{"ref": "bot:a", "baseContentHash": a.ContentHash, "lifecycleState": "won"})
	mustWrite(t, env, reviewer, "updateArtifact", "UpdateArtifactInput", map[string]any{"ref": "bot:b", "baseContentHash": b.ContentHash, "lifecycleState": "lost"})
	var after trace
	env.OK(t, ada, q, map[string]any{"r": "bot:a"}, &after)
	h := after.BrierScoreHistory
	if h == nil || h.Outcome == nil || *h.Outcome != 1 || h.State == nil || *h.State != "won" || len(h.Points) != 3 {
		t.Fatalf("after resolution: %+v", h)
	}
	// (0.9-1)² = 0.01, (0.4-1)² = 0.36, (0.7-1)² = 0.09; running 0.01, 0.185, 0.153333.
	for i, w := range [][2]float64{{0.01, 0.01}, {0.36, 0.185}, {0.09, 0.46 / 3}} {
		p := h.Points[i]
		if !near(p.BrierScore, w[0]) || !near(p.RunningBrierScore, w[1]) {
			t.Errorf("point %d: brier %v running %v, want %v", i, deref(p.BrierScore), deref(p.RunningBrierScore), w)
		}
	}
	if !near(h.BrierScore, 0.46/3) {
		t.Errorf("brierScore %v, want %v", deref(h.BrierScore), 0.46/3)
	}
	// f1: (0.01+0.09)/2 = 0.05; f2: (0.36 + 0.04)/2 = 0.2; f3: 0.25.
	bd, r := leaderboard(t, env, ada, "bot", "calib", nil)
	if len(r.Errors) > 0 {
		t.Fatalf("%s", r.Raw)
	}
	want := []struct {
		id    string
		score float64
		n     int
	}{{"f1", 0.05, 2}, {"f2", 0.2, 2}, {"f3", 0.25, 1}}
	if len(bd.Leaderboard.Edges) != len(want) {
		t.Fatalf("brier board: %+v", bd.Leaderboard.Edges)
	}
	for i, w := range want {
		n := bd.Leaderboard.Edges[i].Node
		if n.Actor == nil || n.Actor.ID != w.id || !closeTo(n.Score, w.score) || n.Count != w.n || n.Rank != i+1 || n.Artifact != nil {
			t.Errorf("brier place %d: %+v, want %+v", i+1, n, w)
		}
	}
	// Forecasts after asOf do not count: as of the third forecast's hour, f1 has one (0.01) on a resolved bot.
	bd, _ = leaderboard(t, env, ada, "bot", "calib", map[string]any{"at": t0.Add(90 * time.Minute).Format(time.RFC3339)})
	if len(bd.Leaderboard.Edges) != 2 || bd.Leaderboard.Edges[0].Node.Actor.ID != "f1" || !closeTo(bd.Leaderboard.Edges[0].Node.Score, 0.01) {
		t.Errorf("brier board as of 13:30: %+v", bd.Leaderboard.Edges)
	}
}

// A tournament of n bots where bot i beats every bot after it, so every
// rating differs.
func tournament(t *testing.T, env *apitest.Env, tok string, n int) {
	t.Helper()
	for i := range n {
		bot(t, env, tok, fmt.Sprintf("p%02d", i))
	}
	for i := range n {
		for j := i + 1; j < n; j += 3 {
			if r := duel(t, env, tok, "duel", fmt.Sprintf("p%02d", i), fmt.Sprintf("p%02d", j), 1); r.Typename != "WriteSuccess" {
				t.Fatalf("duel: %+v", r)
			}
		}
	}
}

// Paging with after cursors walks the whole board once, in the order of one
// big page; every page costs the same number of statements; first above 100,
// an unknown view or type, a foreign cursor are refused naming what was wrong.
func TestLeaderboardPaging(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.ReportStatements = true }})
	registerBots(t, env)
	ada := apitest.Contributor(t, "ada")
	tournament(t, env, ada, 12)
	// The first read after new duels recomputes the cache: a fixed number of statements more.
	_, cold := leaderboard(t, env, ada, "bot", "elo", map[string]any{"n": 2})
	t.Logf("elo: statements of the first page after new duels (the cache recomputed): %v", cold.Extensions["sqlStatements"])
	all, _, _ := ratings(t, env, ada, "elo")
	if len(all) != 12 {
		t.Fatalf("%d rated bots, want 12", len(all))
	}
	asOf := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	for _, view := range []string{"elo", "hot"} {
		if view == "hot" {
			for i := range 12 {
				for v := 0; v <= i%4; v++ {
					signal(t, env, fmt.Sprintf("voter%d", v), fmt.Sprintf("bot:p%02d", i), "vote", 1)
				}
			}
		}
		full, _ := leaderboard(t, env, ada, "bot", view, map[string]any{"n": 100, "at": asOf})
		var walked []string
		var stmts []float64
		var after any
		for page := 1; ; page++ {
			b, r := leaderboard(t, env, ada, "bot", view, map[string]any{"n": 2, "a": after, "at": asOf})
			if len(r.Errors) > 0 {
				t.Fatalf("%s page %d: %s", view, page, r.Raw)
			}
			stmts = append(stmts, r.Extensions["sqlStatements"].(float64))
			for i, e := range b.Leaderboard.Edges {
				walked = append(walked, e.Node.Artifact.ID)
				if e.Node.Rank != (page-1)*2+i+1 {
					t.Errorf("%s page %d entry %d: rank %d", view, page, i, e.Node.Rank)
				}
			}
			if !b.Leaderboard.PageInfo.HasNextPage {
				break
			}
			after = *b.Leaderboard.PageInfo.EndCursor
		}
		var want []string
		for _, e := range full.Leaderboard.Edges {
			want = append(want, e.Node.Artifact.ID)
		}
		if strings.Join(walked, ",") != strings.Join(want, ",") || len(walked) != 12 {
			t.Errorf("%s: pages walked %v, the one page %v", view, walked, want)
		}
		for i := 1; i < 5; i++ {
			if stmts[i] != stmts[0] {
				t.Errorf("%s: statements per page %v: not constant", view, stmts)
				break
			}
		}
		t.Logf("%s: statements per page 1-%d: %v", view, len(stmts), stmts)
	}

	for _, c := range []struct {
		name, view string
		vars       map[string]any
		typ        string
		wantPath   string
		wantIn     []string
	}{
		{"first over 100", "elo", map[string]any{"n": 101}, "bot", "first", []string{"1 to 100"}},
		{"first 0", "elo", map[string]any{"n": 0}, "bot", "first", []string{"1 to 100"}},
		{"unknown view", "glicko", nil, "bot", "view", []string{`"glicko"`, "calib, elo, elo16, hot, judged_elo"}},
		{"unknown type", "elo", nil, "robot", "type", []string{`"robot"`}},
		{"a type without views", "elo", nil, "comment", "view", []string{"declares no views"}},
		{"a cursor of another board", "elo16", map[string]any{"a": nil}, "bot", "after", []string{"bot/elo", "not bot/elo16"}},
		{"a made-up cursor", "elo", map[string]any{"a": "lb:e30"}, "bot", "after", []string{"leaderboard cursor"}},
	} {
		vars := c.vars
		if c.name == "a cursor of another board" {
			b, _ := leaderboard(t, env, ada, "bot", "elo", map[string]any{"n": 1})
			vars = map[string]any{"a": *b.Leaderboard.PageInfo.EndCursor}
		}
		_, r := leaderboard(t, env, ada, c.typ, c.view, vars)
		if len(r.Errors) != 1 || r.Errors[0].Code() != "VALIDATION_FAILED" {
			t.Errorf("%s: %s", c.name, r.Raw)
			continue
		}
		raw := string(r.Raw)
		for _, w := range append([]string{c.wantPath}, c.wantIn...) {
			if !strings.Contains(raw, w) {
				t.Errorf("%s: the error does not say %q: %s", c.name, w, raw)
			}
		}
	}
	r := env.Post(t, ada, `{ eloRating(ref: "bot:p00", view: "hot") { rating } }`, nil)
	if len(r.Errors) != 1 || !strings.Contains(string(r.Raw), `decay_weighted`) || !strings.Contains(string(r.Raw), "elo, elo16, judged_elo") {
		t.Errorf("eloRating of a decay view: %s", r.Raw)
	}
}

// Contributors may be hostile: one cannot give a duel kind only reviewers
// judge, name no opponent, itself, another type's artifact or a missing one,
// put an opponent on a kind that is not a duel, or score outside the declared
// values; and under a replace kind (the hypothesis default) repeating a
// verdict a hundred times counts as the one verdict.
func TestLeaderboardHostileDuels(t *testing.T) {
	env := apitest.New(t)
	reviewer := registerBots(t, env)
	mallory := apitest.Contributor(t, "mallory")
	bot(t, env, mallory, "mine")
	bot(t, env, mallory, "theirs")
	before := env.Count(t, "signals")

	if r := duel(t, env, mallory, "judged", "mine", "theirs", 1); r.Typename != "PermissionDenied" || !strings.Contains(r.Message, "reviewer") ||
		!strings.Contains(r.Message, "signals.judged.roles") {
		t.Errorf("a contributor judging: %+v", r)
	}
	h := createH(t, env, mallory, map[string]any{"title": "TREM2", "content": map[string]any{}})
	for _, c := range []struct {
		name string
		in   map[string]any
		path string
		typ  string
	}{
		{"no opponent", map[string]any{"ref": "bot:mine", "kind": "duel", "value": 1}, "opponent", "ValidationFailed"},
		{"itself", map[string]any{"ref": "bot:mine", "opponent": "bot:mine", "kind": "duel", "value": 1}, "opponent", "ValidationFailed"},
		{"another type", map[string]any{"ref": "bot:mine", "opponent": unpinned(h.Ref), "kind": "duel", "value": 1}, "opponent", "ValidationFailed"},
		{"missing", map[string]any{"ref": "bot:mine", "opponent": "bot:ghost", "kind": "duel", "value": 1}, "", "NotFound"},
		{"not a duel", map[string]any{"ref": "bot:mine", "opponent": "bot:theirs", "kind": "vote", "value": 1}, "opponent", "ValidationFailed"},
		{"a score of 5", map[string]any{"ref": "bot:mine", "opponent": "bot:theirs", "kind": "duel", "value": 5}, "value", "ValidationFailed"},
	} {
		r := mutate(t, env, mallory, "addSignal", "AddSignalInput", c.in)
		if r.Typename != c.typ || (c.path != "" && (len(r.Problems) == 0 || r.Problems[0].Path != c.path)) {
			t.Errorf("%s: %+v", c.name, r)
		}
	}
	if after := env.Count(t, "signals"); after != before {
		t.Errorf("refused duels wrote %d signals", after-before)
	}
	if r := duel(t, env, reviewer, "judged", "theirs", "mine", 1); r.Typename != "WriteSuccess" {
		t.Errorf("a reviewer judging: %+v", r)
	}
	_, score, _ := ratings(t, env, mallory, "judged_elo")
	if !closeTo(score["theirs"], 1516) || !closeTo(score["mine"], 1484) {
		t.Errorf("judged_elo %v: only the reviewer's verdict counts", score)
	}

	// The hypothesis type's duel kind is replace: the latest verdict per judge and pair.
	g := createH(t, env, mallory, map[string]any{"title": "APOE4", "content": map[string]any{}})
	for range 20 {
		if r := mutate(t, env, mallory, "addSignal", "AddSignalInput", map[string]any{"ref": unpinned(h.Ref), "opponent": unpinned(g.Ref),
			"kind": "duel", "value": 1}); r.Typename != "WriteSuccess" {
			t.Fatalf("hypothesis duel: %+v", r)
		}
	}
	var e struct {
		EloRating struct {
			Rating float64
			Games  int
		}
	}
	env.OK(t, mallory, `query($r: Ref!) { eloRating(ref: $r, view: "elo") { rating games } }`, map[string]any{"r": unpinned(h.Ref)}, &e)
	if !closeTo(e.EloRating.Rating, 1516) || e.EloRating.Games != 1 {
		t.Errorf("20 repeats of one verdict: %+v, want 1516 after 1 game", e.EloRating)
	}
	// Another judge's verdict is another game.
	if r := mutate(t, env, apitest.Contributor(t, "bob"), "addSignal", "AddSignalInput", map[string]any{"ref": unpinned(g.Ref),
		"opponent": unpinned(h.Ref), "kind": "duel", "value": 1}); r.Typename != "WriteSuccess" {
		t.Fatalf("bob's duel: %+v", r)
	}
	env.OK(t, mallory, `query($r: Ref!) { eloRating(ref: $r, view: "elo") { rating games } }`, map[string]any{"r": unpinned(h.Ref)}, &e)
	if e.EloRating.Games != 2 || e.EloRating.Rating >= 1516 {
		t.Errorf("after bob's verdict: %+v", e.EloRating)
	}
}

// A view is checked when its schema is registered: one naming a kind that is
// not a duel, without its K-factor, or with a parameter its kind does not take
// is refused, naming the view and the field, and nothing is registered.
func TestViewDeclarationsAreChecked(t *testing.T) {
	env := apitest.New(t)
	reviewer := apitest.Token(t, "rosalind", auth.PermReviewer)
	for _, c := range []struct {
		name string
		view map[string]any
		want []string
	}{
		{"elo over votes without K", map[string]any{"kind": "elo", "signal": "vote", "description": "x"},
			[]string{"views.x.signal", `"opponent": true`, "views.x.k_factor"}},
		{"decay with a K-factor", map[string]any{"kind": "decay_weighted", "signal": "vote", "half_life_hours": 1, "k_factor": 3, "description": "x"},
			[]string{"views.x.k_factor", "takes no k_factor"}},
		{"an undeclared signal", map[string]any{"kind": "brier", "signal": "forecast", "description": "x"},
			[]string{"views.x.signal", `"forecast"`, "calibration, duel, judged, vote"}},
		{"an unknown kind", map[string]any{"kind": "glicko", "signal": "duel", "description": "x"}, []string{"content.views.x.kind", "glicko"}},
	} {
		r := mutate(t, env, reviewer, "createArtifact", "CreateArtifactInput", botSchema(1, map[string]any{"x": c.view}))
		all := r.Message
		for _, p := range r.Problems {
			all += " | " + p.Path + " " + p.Message + " " + string(p.ValueReceived)
		}
		if r.Typename != "ValidationFailed" {
			t.Errorf("%s: %s %s", c.name, r.Typename, all)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: the refusal does not say %q: %s", c.name, w, all)
			}
		}
	}
	var s struct{ Artifact *struct{ ID string } }
	env.OK(t, reviewer, `{ artifact(ref: "schema:bot") { id } }`, nil, &s)
	if s.Artifact != nil {
		t.Errorf("a refused schema was registered")
	}
}

// Readers that find the Elo cache stale at once recompute it one at a time
// (the view's lock): every one of them is answered, with the same ratings.
func TestEloConcurrentReaders(t *testing.T) {
	env := apitest.New(t)
	registerBots(t, env)
	ada := apitest.Contributor(t, "ada")
	tournament(t, env, ada, 6)
	const readers = 8
	got := make([]string, readers)
	errs := make(chan string, readers)
	done := make(chan struct{})
	for i := range readers {
		go func() {
			defer func() { done <- struct{}{} }()
			r := env.Post(t, ada, `{ leaderboard(type: "bot", view: "elo", first: 100) { edges { node { score artifact { id } } } } }`, nil)
			if len(r.Errors) > 0 {
				errs <- string(r.Raw)
				return
			}
			got[i] = string(r.Data)
		}()
	}
	for range readers {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Errorf("a concurrent reader: %s", e)
	}
	for i := 1; i < readers; i++ {
		if got[i] != got[0] {
			t.Errorf("reader %d saw %s, reader 0 %s", i, got[i], got[0])
		}
	}
	if !strings.Contains(got[0], "p00") {
		t.Errorf("board: %s", got[0])
	}
}
