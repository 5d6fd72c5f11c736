// Package gpu is gpu.submit, the action verb that runs an agent's script as
// a sandboxed GPU job: a bwrap sandbox (runtimes/bwrap, through
// skills.Deps.Sandbox) with the VRAM the job asks for and its wall time as
// caps, recorded as a tool_call, queued (the verb declares an hour's wall
// time, past the synchronous limit) and priced per GPU-hour against the
// caller's budget. A server without GPUs refuses the call before it is
// recorded, naming --gpus and the VRAM asked for; one asking for more VRAM
// than the operator allows one job is refused naming --gpu-max-vram-gb.
package gpu

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/scidex/substrate/runtimes"
)

// Function is the tool's name and its in_process function.
const Function = "gpu.submit"

// Version is the version of the verb.
const Version = "1.0.0"

// Manifest is the tool's manifest.
//
//go:embed tool.json
var Manifest []byte

// jobFile is the script's name in the job's bundle.
const jobFile = "job"

// Sandbox runs a sandboxed program: the bwrap runtime satisfies it.
type Sandbox interface {
	Run(ctx context.Context, c *runtimes.Call) (*runtimes.Result, error)
}

// Options are what the operator gives the verb.
type Options struct {
	// Sandbox is the server's bwrap runtime (nil: no job runs).
	Sandbox Sandbox
	// GPUs is --gpus: how many GPUs the operator says this server has. It is
	// a promise: the sandbox does not check for a device.
	GPUs int
	// MaxVRAMGB is --gpu-max-vram-gb: the most VRAM one job may ask for.
	MaxVRAMGB float64
}

// Args are the tool's arguments.
type Args struct {
	Script      string   `json:"script"`
	Args        []string `json:"args,omitempty"`
	VRAMGB      float64  `json:"vram_gb"`
	WallTimeMin float64  `json:"wall_time_min"`
}

// Check refuses, before the call is recorded (so nothing runs and nothing
// is held against a budget), a job this server cannot run: no GPU, more VRAM
// than the operator allows, no sandbox, a script without #!.
func (o Options) Check(raw json.RawMessage) []runtimes.Problem {
	var a Args
	if json.Unmarshal(raw, &a) != nil {
		return nil // the input schema says what is wrong
	}
	var ps []runtimes.Problem
	switch {
	case o.GPUs == 0:
		ps = append(ps, runtimes.Problem{Path: "vram_gb", Constraint: "gpu_available",
			Message: fmt.Sprintf("the job asks for %g GB of VRAM and this server has no GPU (--gpus 0); it will not be run on the CPU instead", a.VRAMGB)})
	case a.VRAMGB > o.MaxVRAMGB:
		ps = append(ps, runtimes.Problem{Path: "vram_gb", Constraint: "maximum",
			Message: fmt.Sprintf("the job asks for %g GB of VRAM, over this server's maximum of %g GB per job (--gpu-max-vram-gb)", a.VRAMGB, o.MaxVRAMGB)})
	}
	if o.Sandbox == nil {
		ps = append(ps, runtimes.Problem{Path: "script", Constraint: "sandbox_available",
			Message: "this server has no bwrap runtime (bubblewrap is not installed), so no job can run"})
	}
	if len(a.Script) < 2 || a.Script[:2] != "#!" {
		ps = append(ps, runtimes.Problem{Path: "script", Constraint: "shebang",
			Message: "the script must start with #! naming its interpreter (e.g. #!/bin/sh or #!/usr/bin/python3)"})
	}
	return ps
}

// New returns the verb: check again (a call that got past Check on another
// server, or a changed configuration), then run the script in the sandbox
// with the caps asked for.
func New(o Options) func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
	return func(ctx context.Context, raw json.RawMessage, progress func(runtimes.Progress)) (json.RawMessage, error) {
		var a Args
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
		if ps := o.Check(raw); len(ps) > 0 {
			return nil, runtimes.Errorf(runtimes.CodeRefused, true, "%s: %s", ps[0].Path, ps[0].Message)
		}
		t := Job(a)
		stdin, _ := json.Marshal(map[string]any{"args": nonNil(a.Args), "vram_gb": a.VRAMGB, "wall_time_min": a.WallTimeMin, "gpus": o.GPUs})
		res, err := o.Sandbox.Run(ctx, &runtimes.Call{Tool: t, Args: stdin, Progress: progress})
		if err != nil {
			var re *runtimes.Error
			if errors.As(err, &re) {
				return nil, re // wall_timeout, memory_limit...: the code says which cap
			}
			return nil, err
		}
		return json.Marshal(map[string]any{"output": res.Output, "vram_gb": a.VRAMGB, "wall_time_min": a.WallTimeMin,
			"script_sha256": t.Files[0].SHA256})
	}
}

// Job is the sandboxed tool a job runs as: its bundle is the script alone,
// its command the script and its arguments, no network, the VRAM and wall
// time asked for as caps.
func Job(a Args) *runtimes.Tool {
	bundle := runtimes.OneFile{Path: jobFile, Content: []byte(a.Script)}
	file := bundle.File()
	cmd, _ := json.Marshal(map[string]any{"command": append([]string{jobFile}, a.Args...)})
	wall := time.Duration(math.Round(a.WallTimeMin * float64(time.Minute)))
	return &runtimes.Tool{
		Ref: "tool:" + Function + "@" + Version, Name: Function + ".job", Version: "job-" + file.SHA256[:16], Runtime: "bwrap",
		Config: cmd,
		Caps:   runtimes.Caps{WallTime: wall, VRAMGB: a.VRAMGB, CPUCount: 1, Network: "deny"},
		Files:  []runtimes.File{file},
		Bundle: bundle,
	}
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
