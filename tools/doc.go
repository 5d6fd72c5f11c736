// Package tools is this build's registry of in_process tools: the Go
// functions an in_process tool's runtime_config may name. Each tool lives in
// its own directory (tools/<name>/) with its manifest (tool.json), a README
// and examples; those with Go code have it there too, and InProcess lists
// them. Tools of the other runtimes (a sandboxed program, an HTTP service, an
// MCP server) are bundles in their directories, registered with
// `scidex tool register tools/<name>/`.
package tools

import (
	"github.com/scidex/substrate/runtimes/inprocess"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools/checksum"
	"github.com/scidex/substrate/tools/compare"
	gaterun "github.com/scidex/substrate/tools/gate_run"
)

// InProcess returns the compiled-in functions by the name runtime_config
// gives them: the tools here, the skills' and the action verbs' (Verbs).
// d.Store is the store the tools that write artifacts write through, as the
// caller; the skills and verbs take the rest of d.
func InProcess(d skills.Deps) map[string]inprocess.Func {
	return inProcess(d, Verbs(d))
}

func inProcess(d skills.Deps, verbs []Verb) map[string]inprocess.Func {
	funcs := map[string]inprocess.Func{
		checksum.Function: checksum.Run,
		gaterun.Function:  gaterun.New(d.Store),
		compare.Function:  compare.New(d.Store),
	}
	for name, f := range skills.Funcs(d) {
		funcs[name] = f
	}
	for _, v := range verbs {
		if v.Run != nil { // a verb's tool of another runtime (debate.turn, a skill_call)
			funcs[v.Name] = v.Run
		}
	}
	return funcs
}

// Runtime is the in_process runtime of this build: every function of
// InProcess, with the skills' and the verbs' argument checks.
func Runtime(d skills.Deps) *inprocess.Runtime {
	verbs := Verbs(d)
	checks := skills.Checks(d)
	for _, v := range verbs {
		if v.Check != nil {
			checks[v.Name] = v.Check
		}
	}
	return inprocess.New(inProcess(d, verbs)).WithChecks(checks)
}
