package store

import (
	"context"
	"fmt"
	"time"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/ref"
)

// Batch reads. Each function here reads one kind of thing for many artifacts (or
// actors) in one statement, whatever their number: the artifacts by pk or by
// ref, their links, signal figures and histories, the actors, the caller's
// deliveries. resolvers/loaders.go and the lookahead of resolvers/prefetch.go
// call them once per level of a query for every node of that level, which is
// what keeps a request's statement count tied to the query's shape rather than
// to how many nodes it returns (the statement-count tests of internal/server).
// Reads of one artifact are in read.go.

// GetMany returns the current versions of many artifacts in one statement, keyed
// by unpinned ref string. Absent artifacts are absent from the map.
func (s *Store) GetMany(ctx context.Context, refs []ref.Ref) (map[string]*Artifact, error) {
	types := make([]string, len(refs))
	ids := make([]string, len(refs))
	for i, r := range refs {
		types[i], ids[i] = r.Type, r.ID
	}
	rows, err := s.q.ArtifactGetManyByTypeID(ctx, types, ids)
	if err != nil {
		return nil, fmt.Errorf("get %d artifacts: %w", len(refs), err)
	}
	out := make(map[string]*Artifact, len(rows))
	arts := make([]*Artifact, 0, len(rows))
	for _, row := range rows {
		arts = append(arts, fromRow(row))
	}
	if err := s.upgradeAll(ctx, arts); err != nil {
		return nil, err
	}
	hidden, err := s.hidden(ctx, arts)
	if err != nil {
		return nil, err
	}
	for _, a := range arts {
		if !hidden[a.PK] {
			out[a.Unpinned().String()] = a
		}
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
	if err := s.upgradeAll(ctx, arts); err != nil {
		return nil, err
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

// LinksFor returns, for each of many artifacts, its first links matching q, each
// with the artifact at its other end, in one statement whatever the number of
// artifacts.
func (s *Store) LinksFor(ctx context.Context, pks []int64, q LinkQuery) (map[int64][]Link, error) {
	preds := q.Predicates
	if preds == nil {
		preds = []string{}
	}
	out := make(map[int64][]Link, len(pks))
	add := func(src int64, l dbsqlc.Link, other dbsqlc.Artifact, brief bool) {
		link := *linkFromRow(l)
		link.Other = fromRow(other)
		link.Other.Brief = brief
		out[src] = append(out[src], link)
	}
	var err error
	switch {
	case q.Direction == DirIn:
		var rows []dbsqlc.LinkListInRow
		rows, err = s.q.LinkListIn(ctx, dbsqlc.LinkListInParams{Pks: pks, Predicates: preds, AfterPk: q.AfterPK, Lim: int32(q.Limit)})
		for _, r := range rows {
			add(r.SourcePk, r.Link, r.Artifact, false)
		}
	case q.Direction == DirBoth:
		var rows []dbsqlc.LinkListBothRow
		rows, err = s.q.LinkListBoth(ctx, dbsqlc.LinkListBothParams{Pks: pks, Predicates: preds, AfterPk: q.AfterPK, Lim: int32(q.Limit)})
		for _, r := range rows {
			add(r.SourcePk, r.Link, r.Artifact, false)
		}
	case q.Brief && q.Direction == DirOut:
		var rows []dbsqlc.LinkListOutBriefRow
		rows, err = s.q.LinkListOutBrief(ctx, dbsqlc.LinkListOutBriefParams{Pks: pks, Predicates: preds, AfterPk: q.AfterPK, Lim: int32(q.Limit)})
		for _, r := range rows {
			// The view's columns are the table's (migration 0024): this
			// conversion compiles only while they are.
			add(r.SourcePk, r.Link, dbsqlc.Artifact(r.ArtifactBrief), true)
		}
	default:
		var rows []dbsqlc.LinkListOutRow
		rows, err = s.q.LinkListOut(ctx, dbsqlc.LinkListOutParams{Pks: pks, Predicates: preds, AfterPk: q.AfterPK, Lim: int32(q.Limit)})
		for _, r := range rows {
			add(r.SourcePk, r.Link, r.Artifact, false)
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

// Actor is what the substrate records of an actor from its writes.
type Actor struct {
	ID          string
	Kind        string
	Permissions []string
	Handle      *string
}

// Actors returns what is recorded of many actors.
func (s *Store) Actors(ctx context.Context, ids []string) ([]Actor, error) {
	rows, err := s.q.ActorGetMany(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("get %d actors: %w", len(ids), err)
	}
	out := make([]Actor, len(rows))
	for i, r := range rows {
		out[i] = Actor{ID: r.ID, Kind: r.Kind, Permissions: r.Permissions, Handle: r.Handle}
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

// Deliveries returns the caller's deliveries of many messages, by message pk.
func (s *Store) Deliveries(ctx context.Context, actorID string, pks []int64) (map[int64]Delivery, error) {
	rows, err := s.q.DeliveryGetMany(ctx, pks, actorID)
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	out := make(map[int64]Delivery, len(rows))
	for _, r := range rows {
		out[r.MessagePk] = s.deliveryFromRow(ctx, r)
	}
	return out, nil
}
