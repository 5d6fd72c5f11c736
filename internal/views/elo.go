package views

import (
	"context"
	"fmt"
	"math"

	"github.com/scidex/substrate/internal/dbsqlc"
)

// EloScale is the rating difference at which the stronger side is expected to
// score 10 to 1.
const EloScale = 400

// ensureElo makes the cache of an elo view current: one statement when it is,
// and a recomputation from every duel, under the view's lock, when the duels
// or the declaration changed since it was computed.
func (v *Views) ensureElo(ctx context.Context, d *Declared) error {
	fp := fingerprint(d)
	f, err := v.q.ViewFreshness(ctx, d.View.Signal, d.Type.Name(), d.Name)
	if err != nil {
		return fmt.Errorf("elo view %s/%s: freshness: %w", d.Type.Name(), d.Name, err)
	}
	if fresh(f, fp) {
		return nil
	}
	tx, err := v.s.Pool().Begin(ctx)
	if err != nil {
		return fmt.Errorf("elo view %s/%s: begin: %w", d.Type.Name(), d.Name, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	q := dbsqlc.New(tx)
	typ := d.Type.Name()
	if err := q.ViewLock(ctx, typ, d.Name); err != nil {
		return fmt.Errorf("elo view %s/%s: lock: %w", typ, d.Name, err)
	}
	// Another reader may have recomputed it while this one waited.
	if f, err = q.ViewFreshness(ctx, d.View.Signal, typ, d.Name); err != nil {
		return fmt.Errorf("elo view %s/%s: freshness: %w", typ, d.Name, err)
	}
	if fresh(f, fp) {
		return nil
	}
	duels, err := q.ViewDuels(ctx, d.View.Signal, typ)
	if err != nil {
		return fmt.Errorf("elo view %s/%s: duels: %w", typ, d.Name, err)
	}
	ratings := Elo(duels, d.View.KFactor, d.View.Initial(), d.Rule.Aggregation == "replace")
	if err := q.ViewCacheUpsert(ctx, dbsqlc.ViewCacheUpsertParams{Type: typ, View: d.Name, Fingerprint: fp,
		SignalCount: f.SignalCount, LastSignalPk: f.LastSignalPk, ComputedAt: requestNow(ctx)}); err != nil {
		return fmt.Errorf("elo view %s/%s: cache: %w", typ, d.Name, err)
	}
	if err := q.ViewScoresDelete(ctx, typ, d.Name); err != nil {
		return fmt.Errorf("elo view %s/%s: clear: %w", typ, d.Name, err)
	}
	in := dbsqlc.ViewScoresInsertParams{Type: typ, View: d.Name}
	for _, r := range ratings {
		in.ArtifactPks = append(in.ArtifactPks, r.PK)
		in.Scores = append(in.Scores, r.Rating)
		in.Games = append(in.Games, int32(r.Games))
		in.Wins = append(in.Wins, int32(r.Wins))
		in.Losses = append(in.Losses, int32(r.Losses))
		in.Draws = append(in.Draws, int32(r.Draws))
	}
	if len(ratings) > 0 {
		if err := q.ViewScoresInsert(ctx, in); err != nil {
			return fmt.Errorf("elo view %s/%s: store: %w", typ, d.Name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("elo view %s/%s: commit: %w", typ, d.Name, err)
	}
	return nil
}

// fresh reports whether a cache was computed from the signals there are now,
// by the declaration there is now.
func fresh(f dbsqlc.ViewFreshnessRow, fp string) bool {
	return f.CachedFingerprint != nil && *f.CachedFingerprint == fp &&
		f.CachedSignalCount != nil && *f.CachedSignalCount == f.SignalCount &&
		f.CachedLastSignalPk != nil && *f.CachedLastSignalPk == f.LastSignalPk
}

// Rated is one artifact's result of a tournament.
type Rated struct {
	PK                         int64
	Rating                     float64
	Games, Wins, Losses, Draws int
}

// Elo plays duels in order (each row: the signalled artifact scored Value, 1
// a win, 0.5 a draw, 0 a loss, against its opponent) from the initial rating
// with factor k: the expected score of A is 1 / (1 + 10^((Rb - Ra) / 400)),
// and each game moves A by k × (score - expected) and B by as much the other
// way. With latestOnly (a replace kind) only each judge's latest verdict on a
// pair of artifacts plays, at its own place in the order, so one judge repeating
// a verdict moves nothing further. Ratings are returned in the order the
// artifacts first played.
func Elo(duels []dbsqlc.ViewDuelsRow, k, initial float64, latestOnly bool) []Rated {
	type verdict struct {
		voter  string
		lo, hi int64
	}
	keep := make([]bool, len(duels))
	if latestOnly {
		last := map[verdict]int{}
		for i, d := range duels {
			lo, hi := min(d.ArtifactPk, d.OpponentPk), max(d.ArtifactPk, d.OpponentPk)
			last[verdict{d.Voter, lo, hi}] = i
		}
		for _, i := range last {
			keep[i] = true
		}
	} else {
		for i := range keep {
			keep[i] = true
		}
	}
	index := map[int64]int{}
	var out []Rated
	get := func(pk int64) *Rated {
		i, ok := index[pk]
		if !ok {
			i = len(out)
			index[pk] = i
			out = append(out, Rated{PK: pk, Rating: initial})
		}
		return &out[i]
	}
	for i, d := range duels {
		if !keep[i] || d.ArtifactPk == d.OpponentPk {
			continue
		}
		get(d.ArtifactPk)
		get(d.OpponentPk)
		a, b := &out[index[d.ArtifactPk]], &out[index[d.OpponentPk]]
		expected := 1 / (1 + math.Pow(10, (b.Rating-a.Rating)/EloScale))
		delta := k * (d.Value - expected)
		a.Rating += delta
		b.Rating -= delta
		a.Games++
		b.Games++
		switch {
		case d.Value > 0.5:
			a.Wins++
			b.Losses++
		case d.Value < 0.5:
			a.Losses++
			b.Wins++
		default:
			a.Draws++
			b.Draws++
		}
	}
	return out
}
