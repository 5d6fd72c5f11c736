// Package tools is this build's registry of in_process tools: the Go
// functions an in_process tool's runtime_config may name. Each tool lives in
// its own directory (tools/<name>/) with its manifest (tool.json), a README
// and examples; those with Go code have it there too, and InProcess lists
// them. Tools of the other runtimes (a sandboxed program, an HTTP service, an
// MCP server) are bundles in their directories, registered with
// `scidex tool register tools/<name>/`.
package tools

import (
	"context"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes/inprocess"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools/checksum"
	"github.com/scidex/substrate/tools/compare"
	gaterun "github.com/scidex/substrate/tools/gate_run"
)

// InProcess returns the compiled-in functions by the name runtime_config
// gives them. st is the store the tools that write artifacts write through,
// as the caller.
func InProcess(st *store.Store) map[string]inprocess.Func {
	funcs := map[string]inprocess.Func{
		checksum.Function: checksum.Run,
		gaterun.Function:  gaterun.New(st),
		compare.Function:  compare.New(st),
	}
	for name, f := range skills.Funcs(skills.Deps{Store: st}) {
		funcs[name] = f
	}
	return funcs
}

// Runtime is the in_process runtime of this build: every function of
// InProcess, with the skills' argument checks.
func Runtime(st *store.Store) *inprocess.Runtime {
	return inprocess.New(InProcess(st)).WithChecks(skills.Checks(skills.Deps{Store: st}))
}

// InstallSkills is the start hook that registers the skills' tools and skill
// artifacts (app.Config.OnStart).
func InstallSkills(ctx context.Context, a *app.App) error {
	return skills.Install(ctx, a.Dispatch, a.Store, skills.Catalog(skills.Deps{Store: a.Store}))
}
