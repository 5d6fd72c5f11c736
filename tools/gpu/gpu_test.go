package gpu_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
	"github.com/scidex/substrate/runtimes/skillcall"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

const invokeQ = `mutation($a: JSON!) {
  invokeTool(input: {name: "gpu.submit", args: $a}) {
    __typename
    ... on ToolCall { artifactId status }
    ... on ValidationFailed { problems { path constraint message } }
    ... on Problem { code message } } }`

type call struct {
	Typename   string `json:"__typename"`
	ArtifactID string
	Status     string
	Problems   []struct{ Path, Constraint, Message string }
	Code       string
	Message    string
}

func invoke(t *testing.T, e *apitest.Env, token string, args any) call {
	t.Helper()
	var out struct{ InvokeTool call }
	e.OK(t, token, invokeQ, map[string]any{"a": args}, &out)
	return out.InvokeTool
}

const hello = "#!/bin/sh\nread -r input\nprintf '{\"host\": \"%s\", \"argv\": \"%s\", \"stdin\": %s}' \"$(cat /proc/sys/kernel/hostname)\" \"$*\" \"$input\"\n"

// On a server without GPUs (--gpus 0, as this machine) gpu.submit is
// refused before anything is recorded, naming --gpus and the VRAM asked for.
func TestGPUSubmitRefusedWithoutGPUs(t *testing.T) {
	e := apitest.New(t)
	ada := apitest.Contributor(t, "ada")
	before := e.Counts(t)
	c := invoke(t, e, ada, map[string]any{"script": hello, "vram_gb": 8, "wall_time_min": 5})
	if c.Typename != "ValidationFailed" || len(c.Problems) == 0 || c.Problems[0].Path != "input.args.vram_gb" || c.Problems[0].Constraint != "gpu_available" ||
		!strings.Contains(c.Problems[0].Message, "--gpus 0") || !strings.Contains(c.Problems[0].Message, "8 GB of VRAM") {
		t.Fatalf("without GPUs: %+v", c)
	}
	if after := e.Counts(t); !maps.Equal(before, after) {
		t.Errorf("a refused job wrote: %v -> %v", before, after)
	}
}

// gpuServer is a test server started as with --gpus 1 --gpu-max-vram-gb 8,
// its jobs in a real bwrap sandbox told it has one GPU.
func gpuServer(t *testing.T) *apitest.Env {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("no bubblewrap on this machine")
	}
	dir, err := os.MkdirTemp("", "gpu-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	box, err := bwrap.New(bwrap.Options{CacheDir: filepath.Join(dir, "cache"), GPUs: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return apitest.New(t, apitest.Opts{App: func(c *app.Config) {
		c.Runtimes = func(st *store.Store) (*runtimes.Registry, error) {
			return runtimes.NewRegistry(tools.Runtime(skills.Deps{Store: st, Sandbox: box, GPUs: 1, MaxVRAMGB: 8}), skillcall.New(workpacket.Writer(st)))
		}
	}})
}

// until waits (on the call's events, no sleeps) for cond.
func until(t *testing.T, e *apitest.Env, id string, cond func() bool) {
	t.Helper()
	sel, err := event.NewSelector([]string{"*"}, nil, "tool_call:"+id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sub := e.Hub.Subscribe(ctx, event.SubscribeOpts{Actor: auth.System(), Selector: sel})
	timeout := time.After(60 * time.Second)
	for !cond() {
		select {
		case <-sub.C:
		case <-sub.Done():
			t.Fatalf("the event subscription ended: %s", sub.Reason())
		case <-timeout:
			t.Fatalf("call %s did not finish within 60s", id)
		}
	}
}

type finished struct {
	Status  string
	Result  json.RawMessage
	Error   json.RawMessage
	CostUsd *float64
}

func wait(t *testing.T, e *apitest.Env, token, id string) finished {
	t.Helper()
	var out struct{ ToolCall finished }
	until(t, e, id, func() bool {
		e.OK(t, token, `query($id: ID!) { toolCall(id: $id) { status result error costUsd } }`, map[string]any{"id": id}, &out)
		s := out.ToolCall.Status
		return s == "SUCCEEDED" || s == "FAILED" || s == "CANCELLED"
	})
	return out.ToolCall
}

// With --gpus 1: a job over the VRAM maximum is refused naming it; a job
// within it is queued, runs in the sandbox (its hostname is the sandbox's,
// its arguments and the caps reach it) and is priced per GPU-hour; a job
// running past its wall time is killed and fails wall_timeout.
func TestGPUSubmitRunsInTheSandbox(t *testing.T) {
	e := gpuServer(t)
	ada := apitest.Contributor(t, "ada")
	before := e.Counts(t)
	c := invoke(t, e, ada, map[string]any{"script": hello, "vram_gb": 16, "wall_time_min": 5})
	if c.Typename != "ValidationFailed" || len(c.Problems) != 1 || c.Problems[0].Path != "input.args.vram_gb" ||
		!strings.Contains(c.Problems[0].Message, "16 GB") || !strings.Contains(c.Problems[0].Message, "maximum of 8 GB per job (--gpu-max-vram-gb)") {
		t.Fatalf("over the VRAM maximum: %+v", c)
	}
	if c := invoke(t, e, ada, map[string]any{"script": "echo hi", "vram_gb": 4, "wall_time_min": 5}); c.Typename != "ValidationFailed" || c.Problems[0].Constraint != "shebang" {
		t.Errorf("no #!: %+v", c)
	}
	if c := invoke(t, e, ada, map[string]any{"script": hello, "vram_gb": 4, "wall_time_min": 61}); c.Typename != "ValidationFailed" || c.Problems[0].Path != "input.args.wall_time_min" {
		t.Errorf("61 minutes: %+v", c)
	}
	if after := e.Counts(t); !maps.Equal(before, after) {
		t.Errorf("refused jobs wrote: %v -> %v", before, after)
	}

	// Budgeted: the hour's GPU price (2 USD) is held when the call is
	// recorded; a caller with 1 USD left is refused and nothing runs.
	root := apitest.Token(t, "root", auth.PermAdmin)
	var sb struct {
		SetBudget struct {
			Typename string `json:"__typename"`
		}
	}
	e.OK(t, root, `mutation { setBudget(input: {actor: "bea", limitUsd: 1, period: DAY}) { __typename } }`, nil, &sb)
	if sb.SetBudget.Typename != "Budget" {
		t.Fatalf("setBudget: %+v", sb)
	}
	before = e.Counts(t) // setBudget's own event
	if c := invoke(t, e, apitest.Contributor(t, "bea"), map[string]any{"script": hello, "vram_gb": 4, "wall_time_min": 1}); c.Typename != "BudgetExceeded" {
		t.Errorf("over budget: %+v", c)
	}
	if after := e.Counts(t); !maps.Equal(before, after) {
		t.Errorf("a job over budget wrote: %v -> %v", before, after)
	}

	c = invoke(t, e, ada, map[string]any{"script": hello, "args": []string{"--epochs", "1"}, "vram_gb": 4, "wall_time_min": 1})
	if c.Typename != "ToolCall" || c.Status != "QUEUED" {
		t.Fatalf("a job: %+v (want it queued)", c)
	}
	done := wait(t, e, ada, c.ArtifactID)
	var res struct {
		Output struct {
			Host, Argv string
			Stdin      struct {
				Args   []string `json:"args"`
				VRAMGB float64  `json:"vram_gb"`
				GPUs   int      `json:"gpus"`
			}
		}
		VRAMGB float64 `json:"vram_gb"`
	}
	if done.Status != "SUCCEEDED" || json.Unmarshal(done.Result, &res) != nil || res.Output.Host != "sandbox" || res.Output.Argv != "--epochs 1" ||
		res.Output.Stdin.VRAMGB != 4 || res.Output.Stdin.GPUs != 1 || len(res.Output.Stdin.Args) != 2 {
		t.Fatalf("the job: %s %s %s", done.Status, done.Result, done.Error)
	}
	if done.CostUsd == nil || *done.CostUsd <= 0 {
		t.Errorf("a GPU job cost nothing: %v", done.CostUsd)
	}

	// 0.02 min = 1.2 s of wall time for a job that would sleep 30 s.
	c = invoke(t, e, ada, map[string]any{"script": "#!/bin/sh\nsleep 30\necho '{}'\n", "vram_gb": 1, "wall_time_min": 0.02})
	start := time.Now()
	done = wait(t, e, ada, c.ArtifactID)
	if done.Status != "FAILED" || !strings.Contains(string(done.Error), "wall_timeout") {
		t.Fatalf("past its wall time: %s %s", done.Status, done.Error)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the wall cap took %v to stop a 1.2 s job", d)
	}
}
