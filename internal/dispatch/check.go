package dispatch

import (
	"context"
	"fmt"
	"strings"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
)

// ToolCheck is the store's hook for the runtimes' part of checking a tool
// manifest (store.Opts.ToolCheck): a handler is registered for the tool's
// runtime, and that runtime accepts its runtime_config and caps. It runs on
// every write of a tool, so a manifest no runtime here would run is never
// registered, and a lifecycle move re-checks against this build.
// reg is called on each check: the registry may be composed after the store
// (its in-process tools write through the store).
func ToolCheck(reg func() *runtimes.Registry) store.ToolCheck {
	return func(_ context.Context, in *store.ValidationInput) ([]problem.Detail, error) {
		m, err := decodeManifest(in.Content)
		if err != nil {
			return []problem.Detail{problem.Field("content", "tool_manifest_valid", err.Error(), nil)}, nil
		}
		return checkManifest(reg(), m), nil
	}
}

func checkManifest(reg *runtimes.Registry, m *Manifest) []problem.Detail {
	rt, ok := reg.Get(m.Runtime)
	if !ok {
		return []problem.Detail{problem.Field("content.runtime", "runtime_registered",
			fmt.Sprintf("this server has no %s runtime; it runs %s", m.Runtime, orNone(reg.Names())), m.Runtime)}
	}
	var out []problem.Detail
	for _, p := range rt.Check(runtimeTool(&store.Artifact{Type: ToolType, ID: m.Name}, m, nil)) {
		c := p.Constraint
		if c == "" {
			c = "runtime_check"
		}
		out = append(out, problem.Field(pathOf(p.Path), c, p.Message, nil))
	}
	return out
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "no runtime at all"
	}
	return strings.Join(names, ", ")
}
