package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/toolreg"
	"github.com/scidex/substrate/runtimes/inprocess"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools/debate"
	"github.com/scidex/substrate/tools/figure"
	"github.com/scidex/substrate/tools/gpu"
	"github.com/scidex/substrate/tools/market"
	"github.com/scidex/substrate/tools/notebook"
)

// Verb is one of the substrate's action verbs (SPEC-001 §7.4): an in_process
// tool the server installs and activates at every start, so every verb is
// invoked, recorded, budgeted and listed over MCP (tool.<name>) like any
// tool. Each verb lives in its own directory (tools/<verb>/), with its
// manifest and a README.
type Verb struct {
	// Name is the tool's name and its in_process function (debate.start).
	Name string
	// Tool is the manifest (runtime in_process, runtime_config.function Name).
	Tool json.RawMessage
	// Run is the function, with what it writes through bound.
	Run inprocess.Func
	// Check refuses bad arguments before the call is recorded, naming each
	// field (nil: the input schema says it all).
	Check inprocess.ArgsCheck
}

// Verbs is this build's action verbs; the list is the one place a verb is
// added.
func Verbs(d skills.Deps) []Verb {
	var out []Verb
	for _, v := range debate.Verbs(d.Store) { // debate.start, .argue, .replay and the debate.turn packets
		out = append(out, Verb(v))
	}
	mk := market.New(d.Store, d.Budgets)
	out = append(out, Verb{Name: market.TradeFunction, Tool: market.TradeTool(), Run: mk.TradeFunc(), Check: market.CheckTrade},
		Verb{Name: market.QuoteFunction, Tool: market.QuoteTool(), Run: mk.QuoteFunc()})
	out = append(out, Verb{Name: figure.Function, Tool: figure.Manifest, Run: figure.New(d.Store), Check: figure.Check})
	gpuOpts := gpu.Options{GPUs: d.GPUs, MaxVRAMGB: d.MaxVRAMGB}
	if d.Sandbox != nil {
		gpuOpts.Sandbox = d.Sandbox
	}
	out = append(out, Verb{Name: gpu.Function, Tool: gpu.Manifest, Run: gpu.New(gpuOpts), Check: gpuOpts.Check})
	out = append(out, Verb{Name: notebook.Name, Tool: notebook.Manifest, Run: notebook.New(d.Store, d.Sandbox), Check: notebook.Check})
	return out
}

// InstallVerbs makes every verb's tool present, current and active, as the
// server (the system actor). It runs at every start and changes nothing when
// nothing changed.
func InstallVerbs(ctx context.Context, reg *toolreg.Registrar, verbs []Verb) error {
	ctx = request.With(ctx, request.System("install-verbs", time.Now()))
	for _, v := range verbs {
		if err := reg.Install(ctx, v.Tool); err != nil {
			return fmt.Errorf("tools: install the %s verb: %w", v.Name, err)
		}
	}
	return nil
}
