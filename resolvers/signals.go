package resolvers

import (
	"context"
	"sort"
	"sync"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/schema"
	"github.com/scidex/substrate/internal/store"
)

// artifactSignals aggregates an artifact's signals the way its type's schema
// declares them now; stored signals never change when a declaration does.
func (r *Resolver) artifactSignals(ctx context.Context, b *model.Base, kinds []string) (*model.SignalSummary, error) {
	t, err := r.Store.Registry().Get(ctx, b.A.Type)
	if err != nil {
		return nil, err
	}
	figs, err := r.loaders(ctx).Signals(ctx, b.A.PK)
	if err != nil {
		return nil, err
	}
	byKey := map[[2]string]store.SignalFigures{}
	for _, f := range figs {
		byKey[[2]string{f.Kind, f.Dimension}] = f
	}
	want := map[string]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	out := &model.SignalSummary{Kinds: []*model.SignalAggregate{}}
	names := t.Doc.SignalKinds()
	sort.Strings(names)
	for _, kind := range names {
		if len(want) > 0 && !want[kind] {
			continue
		}
		rule := t.Doc.Signals[kind]
		dims := rule.Dimensions
		if len(dims) == 0 {
			dims = []string{"default"}
		}
		for _, dim := range dims {
			f, ok := byKey[[2]string{kind, dim}]
			agg := &model.SignalAggregate{Kind: kind, Dimension: dim, Aggregation: rule.Aggregation}
			if rule.Unit != "" {
				u := rule.Unit
				agg.Unit = &u
			}
			if ok {
				switch rule.Aggregation {
				case "replace":
					agg.Value, agg.Count = ptr(f.LatestMean), f.Voters
				case "sum":
					agg.Value, agg.Count = ptr(f.AllTotal), f.AllCount
					agg.QuadraticTotal = ptr(f.QuadraticTotal)
				case "append":
					agg.Value, agg.Count = ptr(f.LastValue), f.AllCount
				}
			} else if rule.Aggregation == "sum" {
				agg.Value, agg.QuadraticTotal = ptr(0.0), ptr(0.0)
			}
			out.Kinds = append(out.Kinds, agg)
			if kind == "vote" {
				if out.Vote == nil {
					out.Vote = &model.VoteSummary{}
				}
				if ok {
					out.Vote.Score += int(f.LatestTotal)
					out.Vote.Up += f.LatestPositive
					out.Vote.Down += f.LatestNegative
					out.Vote.Count += f.Voters
				}
			}
		}
	}
	if rule, ok := t.Doc.Signals[calibrationKind]; ok && (len(want) == 0 || want[calibrationKind]) {
		out.CalibrationFunc = r.calibration(b, rule)
	}
	return out, nil
}

// calibrationKind is the signal kind whose values are forecasts.
const calibrationKind = "calibration"

// calibration returns the function that reads an artifact's forecasts (once per
// request, shared by calibration and brierScore) and scores them against the
// outcome its lifecycle state resolves to, if it has resolved.
func (r *Resolver) calibration(b *model.Base, rule schema.SignalRule) func(context.Context) ([]*model.CalibrationPoint, *float64, error) {
	var once sync.Once
	var points []*model.CalibrationPoint
	var brier *float64
	var err error
	return func(ctx context.Context) ([]*model.CalibrationPoint, *float64, error) {
		once.Do(func() {
			var hist []store.SignalPoint
			hist, err = r.loaders(ctx).Calibration(ctx, b.A.PK)
			if err != nil {
				return
			}
			outcome, resolved := 0.0, false
			if b.A.LifecycleState != nil {
				outcome, resolved = rule.Outcomes[*b.A.LifecycleState]
			}
			points = make([]*model.CalibrationPoint, len(hist))
			sum := 0.0
			for i, h := range hist {
				p := &model.CalibrationPoint{ForecasterID: h.Voter, Probability: h.Value, At: h.At}
				if resolved {
					s := (h.Value - outcome) * (h.Value - outcome)
					p.BrierScore = &s
					sum += s
				}
				points[i] = p
			}
			if resolved && len(hist) > 0 {
				mean := sum / float64(len(hist))
				brier = &mean
			}
		})
		return points, brier, err
	}
}

func ptr[T any](v T) *T { return &v }
