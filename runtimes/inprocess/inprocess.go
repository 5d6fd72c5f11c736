// Package inprocess is the in_process runtime: tools that are Go functions
// compiled into the server, looked up by name in a registry fixed at build
// time. It is the highest-trust runtime, so a tool's runtime_config can only
// name a registered function ({"function": "checksum.sha256"}); anything
// else is refused when the tool is checked and again when it is called, and
// no input can make the server run code it was not built with.
//
// A function receives its validated arguments and a progress callback and
// must honour its context: the runtime returns when the context ends (wall
// time, cancellation) whether or not the function does, and a function that
// ignores its context keeps running on its goroutine until it returns.
//
// Nothing of the server's internals reaches the caller: a function that
// panics, or fails with an error that is neither a *runtimes.Error nor a
// client-facing *problem.Problem (so a driver error, an *os.PathError naming
// a host path), fails its call with
// CodeInternal and a generic message, and the cause (with the stack of a
// panic) goes to the log once, with the call's id and the request's.
package inprocess

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"strings"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/runtimes"
)

// Name is the runtime's name in a tool's `runtime`.
const Name = "in_process"

// Func is a compiled-in tool. It returns the tool's JSON output, or an error:
// a *runtimes.Error, whose code and message the caller reads (no secrets, no
// host paths in it), for a failure the caller should understand; any other
// error is an internal failure the caller is told nothing of (see the
// package doc).
type Func func(ctx context.Context, args json.RawMessage, progress func(runtimes.Progress)) (json.RawMessage, error)

// ArgsCheck checks a function's arguments before the call is recorded, for
// what JSON Schema cannot say (a quantity's unit); each problem's path is
// relative to the arguments ("dose.unit").
type ArgsCheck func(args json.RawMessage) []runtimes.Problem

// Runtime runs registered functions.
type Runtime struct {
	funcs  map[string]Func
	checks map[string]ArgsCheck
	max    int64
	log    *slog.Logger
}

// New returns the runtime for funcs, the build's registry by function name.
// It logs to slog.Default() unless given a logger (WithLogger).
func New(funcs map[string]Func) *Runtime {
	return &Runtime{funcs: funcs, checks: map[string]ArgsCheck{}, max: runtimes.MaxOutputBytes, log: slog.Default()}
}

// WithLogger sets where the causes of internal failures are logged.
func (r *Runtime) WithLogger(log *slog.Logger) *Runtime {
	if log != nil {
		r.log = log
	}
	return r
}

// WithChecks adds argument checks by function name (see ArgsCheck).
func (r *Runtime) WithChecks(checks map[string]ArgsCheck) *Runtime {
	for k, v := range checks {
		r.checks[k] = v
	}
	return r
}

// CheckArgs implements runtimes.ArgsChecker.
func (r *Runtime) CheckArgs(t *runtimes.Tool, args json.RawMessage) []runtimes.Problem {
	c, err := runtimes.DecodeConfig[config](t.Config)
	if err != nil {
		return nil // Check refuses the tool itself
	}
	if check, ok := r.checks[c.Function]; ok {
		return check(args)
	}
	return nil
}

// Name implements runtimes.Runtime.
func (r *Runtime) Name() string { return Name }

// Functions lists the registered function names, sorted.
func (r *Runtime) Functions() []string {
	out := make([]string, 0, len(r.funcs))
	for n := range r.funcs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

type config struct {
	Function string `json:"function"`
}

// Check implements runtimes.Runtime: runtime_config must name a registered
// function and nothing else.
func (r *Runtime) Check(t *runtimes.Tool) []runtimes.Problem {
	_, ps := r.lookup(t)
	return ps
}

func (r *Runtime) lookup(t *runtimes.Tool) (Func, []runtimes.Problem) {
	c, err := runtimes.DecodeConfig[config](t.Config)
	if err != nil {
		return nil, []runtimes.Problem{{Path: "runtime_config", Constraint: "in_process_config",
			Message: fmt.Sprintf(`an in_process runtime_config is {"function": "<registered name>"} and nothing else: %v`, err)}}
	}
	if c.Function == "" {
		return nil, []runtimes.Problem{{Path: "runtime_config.function", Constraint: "required",
			Message: "an in_process tool names its compiled-in function in runtime_config.function"}}
	}
	f, ok := r.funcs[c.Function]
	if !ok {
		return nil, []runtimes.Problem{{Path: "runtime_config.function", Constraint: "registered_function",
			Message: fmt.Sprintf("%q is not a function this server was built with; registered: %s", c.Function, strings.Join(r.Functions(), ", "))}}
	}
	return f, nil
}

// Run implements runtimes.Runtime.
func (r *Runtime) Run(ctx context.Context, c *runtimes.Call) (*runtimes.Result, error) {
	f, ps := r.lookup(c.Tool)
	if len(ps) > 0 {
		return nil, runtimes.Errorf(runtimes.CodeRefused, true, "%s", ps[0].Message)
	}
	if c.Tool.Caps.WallTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Tool.Caps.WallTime)
		defer cancel()
	}
	progress := c.Progress
	if progress == nil {
		progress = func(runtimes.Progress) {}
	}
	type outcome struct {
		out json.RawMessage
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				r.log.Error("in_process tool panicked", "call_id", c.ID, "request_id", request.IDFrom(ctx),
					"tool", c.Tool.Name, "panic", fmt.Sprint(p), "at", panicSite())
				done <- outcome{err: runtimes.Errorf(runtimes.CodeInternal, false,
					"the tool failed with an internal error (it panicked); the server's log has the cause under call %s", c.ID)}
			}
		}()
		out, err := f(ctx, c.Args, progress)
		done <- outcome{out, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			return nil, r.failure(ctx, c, o.err)
		}
		if int64(len(o.out)) > r.max {
			return nil, runtimes.Errorf(runtimes.CodeOutputTooLarge, false, "the tool's output is %d bytes, over the %d-byte cap", len(o.out), r.max)
		}
		if !json.Valid(o.out) {
			return nil, runtimes.Errorf(runtimes.CodeBadOutput, false, "the tool's output is not valid JSON")
		}
		return &runtimes.Result{Output: o.out}, nil
	case <-ctx.Done():
		return nil, r.failure(ctx, c, ctx.Err())
	}
}

// failure classifies an error: the context's end first (it explains a
// function's own context error), then the function's *runtimes.Error, then
// any other error as an internal failure, logged and not shown.
func (r *Runtime) failure(ctx context.Context, c *runtimes.Call, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return runtimes.Errorf(runtimes.CodeWallTimeout, false, "the tool did not finish within its wall time")
	case ctx.Err() != nil:
		return runtimes.Errorf(runtimes.CodeCancelled, false, "the call was cancelled")
	}
	var e *runtimes.Error
	if errors.As(err, &e) {
		return e
	}
	if p, ok := problem.As(err); ok && p.Code != problem.InternalError {
		// A refusal of the store's (a target the caller may not read, a
		// write its content breaks) is written for clients: the caller reads
		// it as GraphQL would answer it.
		return runtimes.Errorf(runtimes.CodeToolError, false, "%s", p.Error()).With("problem_code", string(p.Code))
	}
	r.log.Error("in_process tool failed with an internal error", "call_id", c.ID, "request_id", request.IDFrom(ctx),
		"tool", c.Tool.Name, "error", err.Error())
	return runtimes.Errorf(runtimes.CodeInternal, false,
		"the tool failed with an internal error; the server's log has the cause under call %s", c.ID)
}

// panicSite is where a recovered panic was raised, as function and line
// (no file path, no stack: the log names the place, not the host's layout).
// It is called from the deferred recover, so the frames above it are the
// runtime's panic machinery and then the panicking function.
func panicSite() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	afterPanic := false
	for {
		f, more := frames.Next()
		if afterPanic && !strings.HasPrefix(f.Function, "runtime.") {
			return fmt.Sprintf("%s:%d", f.Function, f.Line)
		}
		if f.Function == "runtime.gopanic" {
			afterPanic = true
		}
		if !more {
			return "unknown"
		}
	}
}
