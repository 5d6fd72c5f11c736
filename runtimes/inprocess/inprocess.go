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
package inprocess

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/scidex/substrate/runtimes"
)

// Name is the runtime's name in a tool's `runtime`.
const Name = "in_process"

// Func is a compiled-in tool. It returns the tool's JSON output, or an error:
// a *runtimes.Error to choose the code, any other error as a tool_error with
// its message (which the caller will read: no secrets in it).
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
}

// New returns the runtime for funcs, the build's registry by function name.
func New(funcs map[string]Func) *Runtime {
	return &Runtime{funcs: funcs, checks: map[string]ArgsCheck{}, max: runtimes.MaxOutputBytes}
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
	var c config
	if json.Unmarshal(orEmpty(t.Config), &c) != nil {
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
	var c config
	dec := json.NewDecoder(strings.NewReader(string(orEmpty(t.Config))))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
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

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage(`{}`)
	}
	return b
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
				done <- outcome{err: runtimes.Errorf(runtimes.CodeToolError, false, "the tool panicked: %v", p).
					With("stack", string(debug.Stack()))}
			}
		}()
		out, err := f(ctx, c.Args, progress)
		done <- outcome{out, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			return nil, r.failure(ctx, o.err)
		}
		if int64(len(o.out)) > r.max {
			return nil, runtimes.Errorf(runtimes.CodeOutputTooLarge, false, "the tool's output is %d bytes, over the %d-byte cap", len(o.out), r.max)
		}
		if !json.Valid(o.out) {
			return nil, runtimes.Errorf(runtimes.CodeBadOutput, false, "the tool's output is not valid JSON")
		}
		return &runtimes.Result{Output: o.out}, nil
	case <-ctx.Done():
		return nil, r.failure(ctx, ctx.Err())
	}
}

// failure classifies an error: the context's end first (it explains a
// function's own context error), then the function's *runtimes.Error, then
// any other error as the tool's.
func (r *Runtime) failure(ctx context.Context, err error) error {
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
	return runtimes.Errorf(runtimes.CodeToolError, false, "%v", err)
}
