package resolvers

import (
	"context"
	"slices"
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
	want := func(kind string) bool { return len(kinds) == 0 || slices.Contains(kinds, kind) }
	out := &model.SignalSummary{}
	slots := t.SignalSlots()
	aggs := make([]model.SignalAggregate, 0, len(slots)) // one allocation for all
	for _, slot := range slots {
		if !want(slot.Kind) {
			continue
		}
		f, ok := figuresOf(figs, slot.Kind, slot.Dimension)
		rule := slot.Rule
		aggs = append(aggs, model.SignalAggregate{Kind: slot.Kind, Dimension: slot.Dimension, Aggregation: rule.Aggregation, Unit: slot.Unit})
		agg := &aggs[len(aggs)-1]
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
		if slot.Kind == "vote" {
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
	out.Kinds = make([]*model.SignalAggregate, len(aggs))
	for i := range aggs {
		out.Kinds[i] = &aggs[i]
	}
	if rule, ok := t.Doc.Signals[calibrationKind]; ok && want(calibrationKind) {
		out.CalibrationFunc = r.calibration(b, rule)
	}
	return out, nil
}

// figuresOf finds the figures of one kind and dimension among an artifact's
// (a few per declared kind).
func figuresOf(figs []store.SignalFigures, kind, dim string) (store.SignalFigures, bool) {
	for _, f := range figs {
		if f.Kind == kind && f.Dimension == dim {
			return f, true
		}
	}
	return store.SignalFigures{}, false
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
