// Package runtimetest is the conformance suite every runtime passes: a valid
// call, an output that breaks the tool's contract, a timeout, a cancellation,
// a huge output and concurrent calls. A runtime's own tests call Run with a
// Fixture of tools that behave in those ways; the suite asserts what the
// dispatcher, and so a user, relies on: the output comes back verbatim, a
// wall time is enforced by the runtime, a cancelled call stops promptly, an
// output past the cap is refused rather than held, concurrent calls do not
// mix their results.
package runtimetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/runtimes"
)

// Fixture is what a runtime brings to the suite. Each tool is a tool of
// Runtime; none may be nil.
type Fixture struct {
	Runtime runtimes.Runtime
	// Echo answers args {"value": V} with {"value": V}.
	Echo *runtimes.Tool
	// BadOutput answers any args with {"value": "not a number"}, which breaks
	// an output schema asking for a number: the runtime passes it on as is.
	BadOutput *runtimes.Tool
	// Sleep runs until it is stopped. It signals that it is running by
	// reporting progress once, or, for runtimes that cannot report progress,
	// through the channel Started returns (nil when it reports progress).
	Sleep   *runtimes.Tool
	Started func() <-chan struct{}
	// Huge answers with an output larger than runtimes.MaxOutputBytes.
	Huge *runtimes.Tool
	// WallTime is the wall-time cap the suite puts on Sleep for the timeout
	// case (default 300 ms).
	WallTime time.Duration
	// Concurrency is how many calls the concurrent case makes at once
	// (default 16).
	Concurrency int
}

// patience bounds how long the suite waits for a runtime to do what it must
// (a liveness bound that fails a hung runtime, not a timing target).
const patience = 30 * time.Second

// Run runs the conformance suite against f.
func Run(t *testing.T, f Fixture) {
	t.Helper()
	if f.WallTime == 0 {
		f.WallTime = 300 * time.Millisecond
	}
	if f.Concurrency == 0 {
		f.Concurrency = 16
	}
	t.Run("Check", func(t *testing.T) {
		for _, tool := range []*runtimes.Tool{f.Echo, f.BadOutput, f.Sleep, f.Huge} {
			if ps := f.Runtime.Check(tool); len(ps) > 0 {
				t.Errorf("Check(%s) = %+v, want no problem", tool.Name, ps)
			}
		}
	})
	t.Run("ValidCall", func(t *testing.T) {
		out := mustRun(t, f.Runtime, f.Echo, `{"value": {"n": 42, "s": "δ"}}`)
		assertJSON(t, out.Output, `{"value": {"n": 42, "s": "δ"}}`)
	})
	t.Run("InvalidOutputPassedOn", func(t *testing.T) {
		out := mustRun(t, f.Runtime, f.BadOutput, `{"value": 1}`)
		assertJSON(t, out.Output, `{"value": "not a number"}`)
	})
	t.Run("WallTimeout", func(t *testing.T) {
		tool := *f.Sleep
		tool.Caps.WallTime = f.WallTime
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		_, err := f.Runtime.Run(ctx, &runtimes.Call{Tool: &tool, Args: json.RawMessage(`{}`), ID: "conformance-timeout"})
		wantCode(t, err, runtimes.CodeWallTimeout)
		if ctx.Err() != nil {
			t.Fatalf("the runtime did not enforce a wall time of %s within %s", f.WallTime, patience)
		}
	})
	t.Run("Cancellation", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		started := make(chan struct{})
		var once sync.Once
		var signal <-chan struct{}
		if f.Started != nil {
			signal = f.Started()
		}
		done := make(chan error, 1)
		go func() {
			_, err := f.Runtime.Run(ctx, &runtimes.Call{Tool: f.Sleep, Args: json.RawMessage(`{}`), ID: "conformance-cancel",
				Progress: func(runtimes.Progress) { once.Do(func() { close(started) }) }})
			done <- err
		}()
		select {
		case <-started:
		case <-signal:
		case err := <-done:
			t.Fatalf("Sleep ended before it was cancelled: %v", err)
		case <-time.After(patience):
			t.Fatal("Sleep never signalled that it was running")
		}
		cancel()
		select {
		case err := <-done:
			wantCode(t, err, runtimes.CodeCancelled)
		case <-time.After(patience):
			t.Fatal("the runtime did not stop a cancelled call")
		}
	})
	t.Run("HugeOutput", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		res, err := f.Runtime.Run(ctx, &runtimes.Call{Tool: f.Huge, Args: json.RawMessage(`{}`), ID: "conformance-huge"})
		if err == nil {
			t.Fatalf("a %d+ byte output was accepted (%d bytes)", runtimes.MaxOutputBytes, len(res.Output))
		}
		wantCode(t, err, runtimes.CodeOutputTooLarge)
	})
	t.Run("Concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, f.Concurrency)
		for i := range f.Concurrency {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), patience)
				defer cancel()
				args := fmt.Sprintf(`{"value": %d}`, i)
				res, err := f.Runtime.Run(ctx, &runtimes.Call{Tool: f.Echo, Args: json.RawMessage(args), ID: fmt.Sprintf("conformance-%d", i)})
				if err != nil {
					errs <- fmt.Errorf("call %d: %w", i, err)
					return
				}
				if !sameJSON(res.Output, []byte(args)) {
					errs <- fmt.Errorf("call %d got %s, want %s", i, res.Output, args)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

func mustRun(t *testing.T, rt runtimes.Runtime, tool *runtimes.Tool, args string) *runtimes.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	res, err := rt.Run(ctx, &runtimes.Call{Tool: tool, Args: json.RawMessage(args), ID: "conformance"})
	if err != nil {
		t.Fatalf("Run(%s, %s): %v", tool.Name, args, err)
	}
	return res
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var e *runtimes.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v, want a *runtimes.Error with code %s", err, code)
	}
	if e.Code != code {
		t.Fatalf("got code %s (%s), want %s", e.Code, e.Message, code)
	}
}

func assertJSON(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	if !sameJSON(got, []byte(want)) {
		t.Fatalf("output %s, want %s", got, want)
	}
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
