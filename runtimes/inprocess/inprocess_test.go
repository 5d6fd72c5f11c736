package inprocess_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/inprocess"
	"github.com/scidex/substrate/runtimes/runtimetest"
)

func tool(fn string) *runtimes.Tool {
	return &runtimes.Tool{Name: fn, Version: "1.0.0", Runtime: inprocess.Name, Config: json.RawMessage(`{"function":"` + fn + `"}`)}
}

func TestConformance(t *testing.T) {
	rt := inprocess.New(map[string]inprocess.Func{
		"echo": func(_ context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
			return args, nil
		},
		"bad": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
			return json.RawMessage(`{"value":"not a number"}`), nil
		},
		"sleep": func(ctx context.Context, _ json.RawMessage, progress func(runtimes.Progress)) (json.RawMessage, error) {
			progress(runtimes.Progress{Message: "sleeping"})
			<-ctx.Done()
			return nil, ctx.Err()
		},
		"huge": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
			return json.RawMessage(`"` + strings.Repeat("x", runtimes.MaxOutputBytes) + `"`), nil
		},
	})
	runtimetest.Run(t, runtimetest.Fixture{Runtime: rt, Echo: tool("echo"), BadOutput: tool("bad"), Sleep: tool("sleep"), Huge: tool("huge")})
}

// A runtime_config that names anything but a registered function is refused
// when the tool is checked and when it is run.
func TestUnregisteredFunctionRefused(t *testing.T) {
	rt := inprocess.New(map[string]inprocess.Func{"echo": nil})
	for _, cfg := range []string{`{"function":"os.exec"}`, `{}`, `{"function":"echo","path":"/bin/sh"}`, `[1]`} {
		tl := &runtimes.Tool{Name: "x", Runtime: inprocess.Name, Config: json.RawMessage(cfg)}
		if ps := rt.Check(tl); len(ps) == 0 {
			t.Errorf("Check accepted runtime_config %s", cfg)
		}
		_, err := rt.Run(context.Background(), &runtimes.Call{Tool: tl, Args: json.RawMessage(`{}`)})
		if e := runtimes.AsError(err); err == nil || e.Code != runtimes.CodeRefused {
			t.Errorf("Run with runtime_config %s: %v, want refused", cfg, err)
		}
	}
}

func TestPanicIsAToolError(t *testing.T) {
	rt := inprocess.New(map[string]inprocess.Func{"boom": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
		panic("kaboom")
	}})
	_, err := rt.Run(context.Background(), &runtimes.Call{Tool: tool("boom"), Args: json.RawMessage(`{}`)})
	e := runtimes.AsError(err)
	if e.Code != runtimes.CodeToolError || e.Setup || !strings.Contains(e.Message, "kaboom") {
		t.Fatalf("got %+v, want a tool_error naming the panic", e)
	}
}
