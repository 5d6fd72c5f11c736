package store

import (
	"context"
	"fmt"
	"time"

	"github.com/scidex/substrate/internal/dbsqlc"
)

// Link is a typed edge between two artifacts.
type Link struct {
	PK        int64
	FromPK    int64
	Predicate string
	ToPK      int64
	ToHash    *string
	Evidence  []string
	CreatedBy string
	CreatedAt time.Time
	// Other is the artifact at the link's other end (the target of an outgoing
	// link, the source of an incoming one), when the link was read with it.
	Other *Artifact
}

// Link directions, relative to the artifact asked about.
const (
	DirOut  = "OUT"
	DirIn   = "IN"
	DirBoth = "BOTH"
)

// LinkQuery selects links of one direction and predicates, a page at a time.
type LinkQuery struct {
	Direction  string
	Predicates []string
	// Limit is how many rows to fetch per artifact (a page plus one, to learn
	// whether there is a next page).
	Limit   int
	AfterPK int64
}

// LinksFor returns, for each of many artifacts, its first links matching q, each
// with the artifact at its other end, in one statement whatever the number of
// artifacts.
func (s *Store) LinksFor(ctx context.Context, pks []int64, q LinkQuery) (map[int64][]Link, error) {
	preds := q.Predicates
	if preds == nil {
		preds = []string{}
	}
	out := make(map[int64][]Link, len(pks))
	add := func(src int64, l dbsqlc.Link, other dbsqlc.Artifact) {
		link := *linkFromRow(l)
		link.Other = fromRow(other)
		out[src] = append(out[src], link)
	}
	var err error
	switch q.Direction {
	case DirIn:
		var rows []dbsqlc.LinkListInRow
		rows, err = s.q.LinkListIn(ctx, dbsqlc.LinkListInParams{Pks: pks, Predicates: preds, AfterPk: q.AfterPK, Lim: int32(q.Limit)})
		for _, r := range rows {
			add(r.SourcePk, r.Link, r.Artifact)
		}
	case DirBoth:
		var rows []dbsqlc.LinkListBothRow
		rows, err = s.q.LinkListBoth(ctx, dbsqlc.LinkListBothParams{Pks: pks, Predicates: preds, AfterPk: q.AfterPK, Lim: int32(q.Limit)})
		for _, r := range rows {
			add(r.SourcePk, r.Link, r.Artifact)
		}
	default:
		var rows []dbsqlc.LinkListOutRow
		rows, err = s.q.LinkListOut(ctx, dbsqlc.LinkListOutParams{Pks: pks, Predicates: preds, AfterPk: q.AfterPK, Lim: int32(q.Limit)})
		for _, r := range rows {
			add(r.SourcePk, r.Link, r.Artifact)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("links of %d artifacts: %w", len(pks), err)
	}
	var others []*Artifact
	for _, ls := range out {
		for _, l := range ls {
			others = append(others, l.Other)
		}
	}
	hidden, err := s.hidden(ctx, others)
	if err != nil || len(hidden) == 0 {
		return out, err
	}
	for pk, ls := range out {
		kept := ls[:0]
		for _, l := range ls {
			if !hidden[l.Other.PK] {
				kept = append(kept, l)
			}
		}
		out[pk] = kept
	}
	return out, nil
}

// GetManyByPK returns the current versions of many artifacts by primary key.
func (s *Store) GetManyByPK(ctx context.Context, pks []int64) (map[int64]*Artifact, error) {
	rows, err := s.q.ArtifactGetManyByPK(ctx, pks)
	if err != nil {
		return nil, fmt.Errorf("get %d artifacts: %w", len(pks), err)
	}
	out := make(map[int64]*Artifact, len(rows))
	arts := make([]*Artifact, 0, len(rows))
	for _, r := range rows {
		a := fromRow(r)
		out[r.Pk] = a
		arts = append(arts, a)
	}
	hidden, err := s.hidden(ctx, arts)
	if err != nil {
		return nil, err
	}
	for pk := range hidden {
		delete(out, pk)
	}
	return out, nil
}

// History returns versions of a, newest first, older than beforeVersion.
func (s *Store) History(ctx context.Context, a *Artifact, limit, beforeVersion int) ([]*Artifact, error) {
	rows, err := s.q.ArtifactVersionList(ctx, a.PK, int32(beforeVersion), int32(limit))
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", a.Unpinned(), err)
	}
	out := make([]*Artifact, len(rows))
	for i, r := range rows {
		out[i] = atVersion(a, r)
	}
	return out, nil
}

// SignalFigures are the raw aggregates of one kind and dimension on one
// artifact, from which each declared aggregation is read.
type SignalFigures struct {
	Kind, Dimension string
	// LastValue is the newest value given (append).
	LastValue float64
	// AllCount and AllTotal are over every value given (sum); QuadraticTotal is
	// (Σ√v)² over each giver's total (quadratic funding).
	AllCount       int
	AllTotal       float64
	QuadraticTotal float64
	// Voters, LatestMean, LatestTotal, LatestPositive and LatestNegative are over
	// each giver's latest value (replace).
	Voters         int
	LatestMean     float64
	LatestTotal    float64
	LatestPositive int
	LatestNegative int
}

// SignalsFor returns the signal figures of many artifacts in one statement.
func (s *Store) SignalsFor(ctx context.Context, pks []int64) (map[int64][]SignalFigures, error) {
	rows, err := s.q.SignalAggregates(ctx, pks)
	if err != nil {
		return nil, fmt.Errorf("signals of %d artifacts: %w", len(pks), err)
	}
	out := make(map[int64][]SignalFigures, len(pks))
	for _, r := range rows {
		out[r.ArtifactPk] = append(out[r.ArtifactPk], SignalFigures{
			Kind: r.Kind, Dimension: r.Dimension, LastValue: r.LastValue,
			AllCount: int(r.AllCount), AllTotal: r.AllTotal, QuadraticTotal: r.QuadraticTotal,
			Voters: int(r.Voters), LatestMean: r.LatestMean, LatestTotal: r.LatestTotal,
			LatestPositive: int(r.LatestPositive), LatestNegative: int(r.LatestNegative),
		})
	}
	return out, nil
}

// CountLinks counts the links of one artifact in a direction with predicates.
func (s *Store) CountLinks(ctx context.Context, pk int64, direction string, predicates []string) (int, error) {
	cond := "from_pk = $1"
	switch direction {
	case DirIn:
		cond = "to_pk = $1"
	case DirBoth:
		cond = "(from_pk = $1 OR to_pk = $1)"
	}
	if predicates == nil {
		predicates = []string{}
	}
	var n int
	err := s.db.QueryRow(ctx, "SELECT count(*) FROM links WHERE "+cond+
		" AND (cardinality($2::text[]) = 0 OR predicate = ANY ($2::text[]))", pk, predicates).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count links: %w", err)
	}
	return n, nil
}

// SignalPoint is one signal of a history: who gave which value when.
type SignalPoint struct {
	Voter string
	Value float64
	At    time.Time
}

// SignalHistory returns every signal of one kind on many artifacts, oldest first.
func (s *Store) SignalHistory(ctx context.Context, pks []int64, kind string) (map[int64][]SignalPoint, error) {
	rows, err := s.q.SignalHistory(ctx, pks, kind)
	if err != nil {
		return nil, fmt.Errorf("%s history of %d artifacts: %w", kind, len(pks), err)
	}
	out := make(map[int64][]SignalPoint, len(pks))
	for _, r := range rows {
		out[r.ArtifactPk] = append(out[r.ArtifactPk], SignalPoint{Voter: r.Voter, Value: r.Value, At: r.CreatedAt})
	}
	return out, nil
}
