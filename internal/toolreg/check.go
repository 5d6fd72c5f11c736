package toolreg

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolspec"
	"github.com/scidex/substrate/runtimes"
)

// ToolCheck is the store's hook for the registration-time checks of a tool
// manifest (store.Opts.ToolCheck): its resource caps are within the
// operator's limits (toolspec.CheckCaps: none above a maximum; above a default, or
// with network, only as an admin writes it), a handler is registered for its
// runtime, and that runtime accepts its runtime_config and caps. It runs on
// every write of a tool (registerTool, createArtifact, updateArtifact), so a
// manifest no runtime here would run, or asking for more than the operator
// grants, is never stored, and a lifecycle move re-checks against this build.
// reg is called on each check: the registry may be composed after the store
// (its in-process tools write through the store).
func ToolCheck(reg func() *runtimes.Registry, caps toolspec.CapLimits) store.ToolCheck {
	caps = caps.WithDefaults()
	return func(_ context.Context, in *store.ValidationInput) ([]problem.Detail, error) {
		m, err := toolspec.Decode(in.Content)
		if err != nil {
			return []problem.Detail{problem.Field("content", "tool_manifest_valid", err.Error(), nil)}, nil
		}
		out := toolspec.CheckCaps(caps, m, mayExceedDefaults(in))
		return append(out, checkManifest(reg(), m)...), nil
	}
}

func checkManifest(reg *runtimes.Registry, m *toolspec.Manifest) []problem.Detail {
	rt, ok := reg.Get(m.Runtime)
	if !ok {
		return []problem.Detail{problem.Field("content.runtime", "runtime_registered",
			fmt.Sprintf("this server has no %s runtime; it runs %s", m.Runtime, orNone(reg.Names())), m.Runtime)}
	}
	var out []problem.Detail
	for _, p := range rt.Check(m.RuntimeTool(toolspec.ToolType+":"+m.Name, nil)) {
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

// mayExceedDefaults says whether a write may ask for more than the defaults:
// an admin makes it, or its content is the version already stored (a
// lifecycle move or a supersede; the grant was given when that content was
// written). Any change of content by anyone else loses the grant.
func mayExceedDefaults(in *store.ValidationInput) bool {
	if in.Request != nil && in.Request.Actor.Has(auth.PermAdmin) {
		return true
	}
	if in.Prev == nil {
		return false
	}
	next, err1 := canon.Canonical(in.Content)
	prev, err2 := canon.Canonical(in.Prev.Content)
	return err1 == nil && err2 == nil && bytes.Equal(next, prev)
}

// pathOf turns a runtime problem's dotted path into the content path a
// ValidationProblem names.
func pathOf(p string) string {
	return "content." + strings.TrimPrefix(p, "content.")
}
