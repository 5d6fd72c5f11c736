package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/scidex/substrate/internal/problem"
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
	gpuOpts := gpu.Options{GPUs: d.GPUs, MaxVRAMGB: d.MaxVRAMGB, Sandbox: d.Sandbox}
	out = append(out, Verb{Name: gpu.Function, Tool: gpu.Manifest, Run: gpu.New(gpuOpts), Check: gpuOpts.Check})
	out = append(out, Verb{Name: notebook.Name, Tool: notebook.Manifest, Run: notebook.New(d.Store, d.Sandbox), Check: notebook.Check})
	return out
}

// InstallVerbs makes every verb's tool present, current and active, as the
// server (the system actor). It runs at every start and changes nothing when
// nothing changed. A verb this server cannot offer — its runtime is not
// configured (debate.turn without skill_call), or its caps are above the
// operator's maxima (gpu.submit's hour under a shorter --tool-max-wall-time)
// — is left out with one warning naming why; it does not stop the start.
func InstallVerbs(ctx context.Context, reg *toolreg.Registrar, verbs []Verb, log *slog.Logger) error {
	ctx = request.With(ctx, request.System("install-verbs", time.Now()))
	for _, v := range verbs {
		err := reg.Install(ctx, v.Tool)
		if p, ok := problem.As(err); ok && p.Code == problem.ValidationFailed && unservable(p) {
			log.Warn("action verb not offered by this server", "verb", v.Name, "why", p.Error())
			continue
		}
		if err != nil {
			return fmt.Errorf("tools: install the %s verb: %w", v.Name, err)
		}
	}
	return nil
}

// unservable says whether a refusal of a verb's manifest is about this
// server (its runtimes, the operator's caps) rather than the manifest.
func unservable(p *problem.Problem) bool {
	for _, d := range p.Details {
		if d.Path != "content.runtime" && !strings.HasPrefix(d.Path, "content.resource_caps.") {
			return false
		}
	}
	return len(p.Details) > 0
}
