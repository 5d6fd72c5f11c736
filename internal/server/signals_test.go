package server_test

import (
	"math"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
)

func signal(t *testing.T, env *apitest.Env, voter, ref, kind string, value float64, dim ...string) result {
	t.Helper()
	in := map[string]any{"ref": ref, "kind": kind, "value": value}
	if len(dim) > 0 {
		in["dimension"] = dim[0]
	}
	return mutate(t, env, apitest.Contributor(t, voter), "addSignal", "AddSignalInput", in)
}

type summary struct {
	Artifact struct {
		LifecycleState string
		Signals        struct {
			Vote  *struct{ Score, Up, Down, Count int }
			Kinds []struct {
				Kind, Dimension, Aggregation string
				Value, QuadraticTotal        *float64
				Count                        int
				Unit                         *string
			}
			Calibration []struct {
				Forecaster  struct{ ID string }
				Probability float64
				BrierScore  *float64
			}
			BrierScore *float64
		}
	}
}

func (s summary) agg(kind, dim string) (value *float64, count int, quad *float64) {
	for _, k := range s.Artifact.Signals.Kinds {
		if k.Kind == kind && k.Dimension == dim {
			return k.Value, k.Count, k.QuadraticTotal
		}
	}
	return nil, -1, nil
}

func near(a *float64, b float64) bool { return a != nil && math.Abs(*a-b) < 1e-9 }

// Each aggregation on hand-computed cases: latest-per-voter replaces, sums, the
// quadratic-funding total, appends, and Brier scores once a hypothesis resolves.
func TestSignalAggregates(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	h := createH(t, env, tok, map[string]any{"title": "TREM2", "content": map[string]any{}})
	ref := unpinned(h.Ref)
	for _, s := range []struct {
		voter, kind string
		value       float64
		dim         []string
	}{
		// votes, with a re-vote: a's latest (-1) replaces its +1.
		{"a", "vote", 1, nil}, {"b", "vote", 1, nil}, {"c", "vote", -1, nil}, {"a", "vote", -1, nil},
		// ranks per dimension: a re-ranks novelty 0.2 -> 0.6; mean(0.6, 0.9) = 0.75.
		{"a", "rank", 0.2, []string{"novelty"}}, {"b", "rank", 0.9, []string{"novelty"}}, {"a", "rank", 0.6, []string{"novelty"}},
		{"c", "rank", 0.4, []string{"impact"}},
		// funding: a gives 100 then 44 (144 in all), b gives 9: total 153,
		// quadratic (sqrt(144) + sqrt(9))^2 = 225.
		{"a", "fund", 100, nil}, {"a", "fund", 44, nil}, {"b", "fund", 9, nil},
		// forecasts: every one is kept.
		{"a", "calibration", 0.7, nil}, {"b", "calibration", 0.4, nil},
	} {
		if r := signal(t, env, s.voter, ref, s.kind, s.value, s.dim...); r.Typename != "WriteSuccess" {
			t.Fatalf("%+v: %+v", s, r)
		}
	}
	q := `query($r: Ref!) { artifact(ref: $r) { lifecycleState signals {
	  vote { score up down count }
	  kinds { kind dimension aggregation value count quadraticTotal unit }
	  calibration { forecaster { id } probability brierScore } brierScore } } }`
	var s summary
	env.OK(t, tok, q, map[string]any{"r": ref}, &s)
	if v := s.Artifact.Signals.Vote; v == nil || v.Score != -1 || v.Up != 1 || v.Down != 2 || v.Count != 3 {
		t.Errorf("vote: %+v, want score -1, up 1, down 2, count 3", v)
	}
	if v, n, _ := s.agg("vote", "default"); !near(v, -1.0/3) || n != 3 {
		t.Errorf("vote aggregate: %v over %d", v, n)
	}
	if v, n, _ := s.agg("rank", "novelty"); !near(v, 0.75) || n != 2 {
		t.Errorf("rank/novelty: %v over %d, want 0.75 over 2", deref(v), n)
	}
	if v, n, _ := s.agg("rank", "impact"); !near(v, 0.4) || n != 1 {
		t.Errorf("rank/impact: %v over %d", deref(v), n)
	}
	if v, n, _ := s.agg("rank", "feasibility"); v != nil || n != 0 {
		t.Errorf("rank/feasibility with no ranks: %v over %d, want null over 0", deref(v), n)
	}
	if v, n, quad := s.agg("fund", "default"); !near(v, 153) || n != 3 || !near(quad, 225) {
		t.Errorf("fund: %v over %d, quadratic %v; want 153 over 3, quadratic 225", deref(v), n, deref(quad))
	}
	if v, n, _ := s.agg("calibration", "default"); !near(v, 0.4) || n != 2 {
		t.Errorf("calibration (append: latest value): %v over %d", deref(v), n)
	}
	c := s.Artifact.Signals.Calibration
	if len(c) != 2 || c[0].Forecaster.ID != "a" || c[0].Probability != 0.7 || c[1].Probability != 0.4 || c[0].BrierScore != nil || s.Artifact.Signals.BrierScore != nil {
		t.Errorf("unresolved calibration: %+v brier %v", c, s.Artifact.Signals.BrierScore)
	}

	// Resolve the hypothesis as supported (outcome 1): a scores (0.7-1)^2 = 0.09,
	// b scores (0.4-1)^2 = 0.36, mean 0.225.
	reviewer := apitest.Token(t, "rosalind", auth.PermReviewer)
	u := update(t, env, tok, map[string]any{"ref": ref, "baseContentHash": h.ContentHash, "lifecycleState": "under_review"})
	u = update(t, env, reviewer, map[string]any{"ref": ref, "baseContentHash": u.ContentHash, "lifecycleState": "supported"})
	if u.Typename != "WriteSuccess" {
		t.Fatalf("resolve: %+v", u)
	}
	env.OK(t, tok, q, map[string]any{"r": ref}, &s)
	c = s.Artifact.Signals.Calibration
	if len(c) != 2 || !near(c[0].BrierScore, 0.09) || !near(c[1].BrierScore, 0.36) || !near(s.Artifact.Signals.BrierScore, 0.225) {
		t.Errorf("resolved calibration: %+v mean %v", c, deref(s.Artifact.Signals.BrierScore))
	}

	// Only the kinds asked for.
	var only struct {
		Artifact struct {
			Signals struct{ Kinds []struct{ Kind string } }
		}
	}
	env.OK(t, tok, `query($r: Ref!) { artifact(ref: $r) { signals(kinds: ["fund"]) { kinds { kind } } } }`, map[string]any{"r": ref}, &only)
	if len(only.Artifact.Signals.Kinds) != 1 || only.Artifact.Signals.Kinds[0].Kind != "fund" {
		t.Errorf("signals(kinds: [fund]): %+v", only.Artifact.Signals.Kinds)
	}
}

// Values outside the kind's declaration are refused, naming the problem, and nothing is stored.
func TestSignalValidation(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	h := createH(t, env, tok, map[string]any{"title": "h", "content": map[string]any{}})
	ref := unpinned(h.Ref)
	msg := mustWrite(t, env, tok, "sendMessage", "SendMessageInput", map[string]any{"recipient": "actor:b", "body": "hi"})
	before := env.Count(t, "signals")
	for _, c := range []struct {
		name, ref, kind, path, constraint string
		value                             float64
		dim                               []string
	}{
		{"vote of 2", ref, "vote", "value", "enum", 2, nil},
		{"vote of 0", ref, "vote", "value", "enum", 0, nil},
		{"rank above the range", ref, "rank", "value", "maximum", 1.5, []string{"novelty"}},
		{"rank below the range", ref, "rank", "value", "minimum", -0.1, []string{"novelty"}},
		{"rank without its dimension", ref, "rank", "dimension", "required", 0.5, nil},
		{"unknown dimension", ref, "rank", "dimension", "declared", 0.5, []string{"beauty"}},
		{"negative funding", ref, "fund", "value", "minimum", -5, nil},
		{"forecast above 1", ref, "calibration", "value", "maximum", 1.2, nil},
		{"unknown kind", ref, "like", "kind", "declared", 1, nil},
		{"kind the type does not take", unpinned(msg.Ref), "vote", "kind", "declared", 1, nil},
	} {
		r := signal(t, env, "b", c.ref, c.kind, c.value, c.dim...)
		if r.Typename != "ValidationFailed" || len(r.Problems) == 0 || r.Problems[0].Path != c.path || r.Problems[0].Constraint != c.constraint {
			t.Errorf("%s: %s %+v", c.name, r.Typename, r.Problems)
		}
	}
	if r := signal(t, env, "b", "hypothesis:ghost", "vote", 1); r.Typename != "NotFound" {
		t.Errorf("signal on a missing artifact: %+v", r)
	}
	if after := env.Count(t, "signals"); after != before {
		t.Errorf("refused signals were stored: %d -> %d", before, after)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
