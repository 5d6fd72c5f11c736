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

// LinksFor returns, for each of many artifacts, its first links matching q, in
// one statement whatever the number of artifacts.
func (s *Store) LinksFor(ctx context.Context, pks []int64, q LinkQuery) (map[int64][]Link, error) {
	preds := q.Predicates
	if preds == nil {
		preds = []string{}
	}
	out := make(map[int64][]Link, len(pks))
	add := func(src int64, l Link) { out[src] = append(out[src], l) }
	var err error
	switch q.Direction {
	case DirIn:
		var rows []dbsqlc.LinkListInRow
		rows, err = s.q.LinkListIn(ctx, dbsqlc.LinkListInParams{Pks: pks, Predicates: preds, AfterPk: q.AfterPK, Lim: int32(q.Limit)})
		for _, r := range rows {
			add(r.SourcePk, Link{r.Pk, r.FromPk, r.Predicate, r.ToPk, r.ToHash, r.Evidence, r.CreatedBy, r.CreatedAt})
		}
	case DirBoth:
		var rows []dbsqlc.LinkListBothRow
		rows, err = s.q.LinkListBoth(ctx, dbsqlc.LinkListBothParams{Pks: pks, Predicates: preds, AfterPk: q.AfterPK, Lim: int32(q.Limit)})
		for _, r := range rows {
			add(r.SourcePk, Link{r.Pk, r.FromPk, r.Predicate, r.ToPk, r.ToHash, r.Evidence, r.CreatedBy, r.CreatedAt})
		}
	default:
		var rows []dbsqlc.LinkListOutRow
		rows, err = s.q.LinkListOut(ctx, dbsqlc.LinkListOutParams{Pks: pks, Predicates: preds, AfterPk: q.AfterPK, Lim: int32(q.Limit)})
		for _, r := range rows {
			add(r.SourcePk, Link{r.Pk, r.FromPk, r.Predicate, r.ToPk, r.ToHash, r.Evidence, r.CreatedBy, r.CreatedAt})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("links of %d artifacts: %w", len(pks), err)
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
	for _, r := range rows {
		out[r.Pk] = fromRow(r)
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
	err := s.pool.QueryRow(ctx, "SELECT count(*) FROM links WHERE "+cond+
		" AND (cardinality($2::text[]) = 0 OR predicate = ANY ($2::text[]))", pk, predicates).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count links: %w", err)
	}
	return n, nil
}
