// Package compare is the compare tool, one of SPEC-001's action verbs as a
// tool: compare two versions of an artifact (or two artifacts of one type)
// and record what changed as an analysis artifact derived from both, so a
// reviewer's "what changed between these?" is answered once, kept, linked
// and citable. Where gate_run's result is a gate_result, compare's is an
// analysis: a tool's result can be an artifact of any type.
package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
)

// Function is the name runtime_config.function gives it.
const Function = "compare"

type op struct {
	Op   string `json:"op"`
	Path string `json:"path"`
}

// New returns the tool, reading and writing through st as the caller.
func New(st *store.Store) func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
	return func(ctx context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		var in struct {
			From string `json:"from"`
			To   string `json:"to"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
		d, err := st.Diff(ctx, in.From, in.To)
		if err != nil {
			return nil, err
		}
		create, summary, metrics, err := analysis(d)
		if err != nil {
			return nil, err
		}
		// The analysis and its derived_from links commit together: an
		// analysis without them would not say what it compares.
		var res *store.WriteResult
		err = st.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			var err error
			if res, err = tx.Store().CreateArtifact(ctx, create); err != nil {
				return fmt.Errorf("record the comparison: %w", err)
			}
			for _, r := range []string{d.From.Ref().String(), d.To.Ref().String()} {
				if _, err := tx.Store().AddLink(ctx, store.LinkParams{From: res.Ref, Predicate: "derived_from", To: r}); err != nil {
					return fmt.Errorf("link the comparison to %s: %w", r, err)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"analysis": res.Ref, "result_ref": res.Ref, "summary": summary, "metrics": metrics})
	}
}

// analysis is what compare records of d: the analysis artifact to create,
// with its summary and metrics, which the tool's result repeats.
func analysis(d *store.ArtifactDiff) (store.CreateParams, string, map[string]any, error) {
	var ops []op
	if err := json.Unmarshal(d.Patch, &ops); err != nil {
		return store.CreateParams{}, "", nil, fmt.Errorf("read the patch from %s to %s: %w", d.From.Ref(), d.To.Ref(), err)
	}
	byOp := map[string][]string{}
	for _, o := range ops {
		byOp[o.Op] = append(byOp[o.Op], o.Path)
	}
	var texts []string
	for _, t := range d.Text {
		texts = append(texts, t.Path)
	}
	sort.Strings(texts)
	summary := fmt.Sprintf("%d change(s) from %s to %s: %d added, %d removed, %d replaced; text fields changed: %s.",
		len(ops), d.From.Ref(), d.To.Ref(), len(byOp["add"]), len(byOp["remove"]), len(byOp["replace"]), orNone(texts))
	metrics := map[string]any{"changes": len(ops), "added": len(byOp["add"]), "removed": len(byOp["remove"]),
		"replaced": len(byOp["replace"]), "text_fields_changed": len(texts)}
	content, err := json.Marshal(map[string]any{
		"question":      fmt.Sprintf("What changed from %s to %s?", d.From.Ref(), d.To.Ref()),
		"analysis_type": "comparison", "summary": summary, "methods": "RFC 6902 JSON Patch of the contents, line diff of the text fields (the substrate's diff).",
		"results": results(byOp, texts), "parameters": map[string]any{"patch": json.RawMessage(d.Patch)},
		"metrics": metrics, "inputs": []string{d.From.Ref().String(), d.To.Ref().String()}, "software": []string{"tool:compare " + Version},
	})
	if err != nil {
		return store.CreateParams{}, "", nil, fmt.Errorf("encode the comparison: %w", err)
	}
	return store.CreateParams{Type: "analysis",
		Title: fmt.Sprintf("Changes from %s to %s", d.From.Unpinned(), d.To.Unpinned()), Content: content}, summary, metrics, nil
}

// Version is the version of the comparison logic.
const Version = "1.0.0"

// results says in words (markdown) which paths changed how.
func results(byOp map[string][]string, texts []string) string {
	var b strings.Builder
	for _, o := range []string{"add", "remove", "replace", "move", "copy"} {
		if ps := byOp[o]; len(ps) > 0 {
			fmt.Fprintf(&b, "- %s: %s\n", o, strings.Join(ps, ", "))
		}
	}
	fmt.Fprintf(&b, "- text fields changed: %s\n", orNone(texts))
	return b.String()
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
