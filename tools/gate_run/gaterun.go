// Package gaterun is the gate_run tool, one of SPEC-001's action verbs: run a
// named quality gate over an artifact and record the verdict as a
// gate_result artifact linked to it (evaluates), so the verdict is itself
// data others can find, cite and dispute. It runs in process because it reads
// and writes artifacts through the store as the caller: it sees only what
// the caller may read, and the gate_result is the caller's.
package gaterun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
)

// Function is the name runtime_config.function gives it.
const Function = "gate_run"

// Version is the version of the gates' logic, recorded on every gate_result.
const Version = "1"

// check is one check of a gate.
type check struct {
	Name     string `json:"name"`
	Passed   bool   `json:"passed"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// gate evaluates an artifact.
type gate func(ctx context.Context, st *store.Store, a *store.Artifact) ([]check, error)

var gates = map[string]gate{
	"artifact.basic": basic,
	"artifact.cited": cited,
}

// Gates lists the gates this build runs.
func Gates() []string {
	out := make([]string, 0, len(gates))
	for g := range gates {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// New returns the tool, writing through st.
func New(st *store.Store) func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
	return func(ctx context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		var in struct {
			Target string `json:"target"`
			Gate   string `json:"gate"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
		g, ok := gates[in.Gate]
		if !ok {
			return nil, runtimes.Errorf(runtimes.CodeToolError, false, "no gate %q; this build runs %s", in.Gate, strings.Join(Gates(), ", "))
		}
		r, err := ref.Parse(in.Target)
		if err != nil {
			return nil, runtimes.Errorf(runtimes.CodeToolError, false, "target: %v", err)
		}
		a, err := st.Get(ctx, r)
		if errors.Is(err, store.ErrNotFound) {
			return nil, runtimes.Errorf(runtimes.CodeToolError, false, "no artifact %s (or you may not read it)", in.Target)
		}
		if err != nil {
			return nil, err
		}
		checks, err := g(ctx, st, a)
		if err != nil {
			return nil, err
		}
		passed, errs := 0, 0
		for _, c := range checks {
			if c.Passed {
				passed++
			} else if c.Severity == "error" {
				errs++
			}
		}
		verdict := "pass"
		switch {
		case errs > 0:
			verdict = "fail"
		case passed < len(checks):
			verdict = "warn"
		}
		score := float64(passed) / float64(max(len(checks), 1))
		content, _ := json.Marshal(map[string]any{"gate": in.Gate, "gate_version": Version, "target": a.Ref().String(),
			"verdict": verdict, "score": score, "threshold": 1.0, "checks": checks, "evaluator": "tool:" + Function,
			"evaluated_at": time.Now().UTC().Format(time.RFC3339Nano)})
		res, err := st.CreateArtifact(ctx, store.CreateParams{Type: "gate_result",
			Title: fmt.Sprintf("%s on %s: %s", in.Gate, a.Unpinned(), verdict), Content: content})
		if err != nil {
			return nil, fmt.Errorf("record the gate result: %w", err)
		}
		if _, err := st.AddLink(ctx, store.LinkParams{From: res.Ref, Predicate: "evaluates", To: a.Ref().String()}); err != nil {
			return nil, fmt.Errorf("link the gate result to %s: %w", a.Unpinned(), err)
		}
		return json.Marshal(map[string]any{"gate_result": res.Ref, "result_ref": res.Ref, "verdict": verdict, "score": score, "checks": checks})
	}
}

// basic: a title a reader can use, and content with some prose.
func basic(_ context.Context, _ *store.Store, a *store.Artifact) ([]check, error) {
	title := strings.TrimSpace(a.Title)
	upper := title == strings.ToUpper(title) && strings.IndexFunc(title, unicode.IsLetter) >= 0
	var content map[string]any
	_ = json.Unmarshal(a.Content, &content)
	longest := 0
	for _, v := range content {
		if s, ok := v.(string); ok && len(s) > longest {
			longest = len(s)
		}
	}
	return []check{
		{Name: "title_length", Passed: len(title) >= 10 && len(title) <= 200, Severity: "error",
			Message: fmt.Sprintf("the title has %d characters (10 to 200 expected)", len(title))},
		{Name: "title_not_shouting", Passed: !upper, Severity: "warning", Message: "the title is not all capitals"},
		{Name: "has_prose", Passed: longest >= 50, Severity: "warning",
			Message: fmt.Sprintf("the longest text field has %d characters (50 expected)", longest)},
	}, nil
}

// cited: at least one outgoing cites link.
func cited(ctx context.Context, st *store.Store, a *store.Artifact) ([]check, error) {
	n, err := st.CountLinks(ctx, a.PK, "OUT", []string{"cites"})
	if err != nil {
		return nil, err
	}
	return []check{{Name: "cites_a_paper", Passed: n > 0, Severity: "error", Message: fmt.Sprintf("%d outgoing cites links", n)}}, nil
}
