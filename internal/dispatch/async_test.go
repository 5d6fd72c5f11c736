package dispatch_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/inprocess"
)

// waitStatus polls toolCall(id) until its status is one of want (a poll with
// a deadline, not a sleep: it returns as soon as the status is there).
func waitStatus(t *testing.T, e *apitest.Env, token, id string, want ...string) string {
	t.Helper()
	var status string
	until(t, e, "tool_call:"+id, "tool call "+id+" is one of "+strings.Join(want, ", "), func() bool {
		var out struct{ ToolCall struct{ Status string } }
		e.OK(t, token, `query($id: ID!) { toolCall(id: $id) { status } }`, map[string]any{"id": id}, &out)
		status = out.ToolCall.Status
		return slices.Contains(want, status)
	})
	return status
}

func eventTypes(t *testing.T, e *apitest.Env, token, id string) []string {
	t.Helper()
	var poll struct {
		Poll struct{ Events []struct{ Type, Ref string } }
	}
	e.OK(t, token, `{ poll(types: ["tool_call.*"], from: START, limit: 1000) { events { type ref } } }`, nil, &poll)
	var out []string
	for _, ev := range poll.Poll.Events {
		if strings.HasPrefix(ev.Ref, "tool_call:"+id+"@") {
			out = append(out, ev.Type)
		}
	}
	return out
}

// An async call returns QUEUED at once, is worked by the queue with its
// progress as events, and ends SUCCEEDED with its result.
func TestAsyncCall(t *testing.T) {
	release := make(chan struct{})
	e := env(t, map[string]inprocess.Func{"test.slow": func(ctx context.Context, args json.RawMessage, progress func(runtimes.Progress)) (json.RawMessage, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		half := 0.5
		progress(runtimes.Progress{Fraction: &half, Message: "half way"})
		return args, nil
	}})
	activate(t, e, testTool("test.slow", "test.slow"))
	c := invoke(t, e, alice(t), "test.slow", map[string]any{"value": 5}, map[string]any{"async": true})
	if c.Typename != "ToolCall" || (c.Status != "QUEUED" && c.Status != "RUNNING") {
		t.Fatalf("async call: %+v", c)
	}
	waitStatus(t, e, alice(t), c.ArtifactID, "RUNNING")
	close(release)
	waitStatus(t, e, alice(t), c.ArtifactID, "SUCCEEDED")
	var out struct {
		ToolCall struct {
			Result json.RawMessage
			Async  bool
		}
	}
	e.OK(t, alice(t), `query($id: ID!) { toolCall(id: $id) { result async } }`, map[string]any{"id": c.ArtifactID}, &out)
	if string(out.ToolCall.Result) != `{"value":5}` || !out.ToolCall.Async {
		t.Fatalf("finished async call: %+v", out.ToolCall)
	}
	got := strings.Join(eventTypes(t, e, alice(t), c.ArtifactID), ",")
	if got != "tool_call.queued,tool_call.started,tool_call.progress,tool_call.completed" {
		t.Fatalf("events %s", got)
	}
}

// cancelToolCall stops a running call (its context ends) and records it
// cancelled; a finished call cannot be cancelled; another actor cannot
// cancel yours.
func TestCancelRunningCall(t *testing.T) {
	stopped := make(chan struct{})
	e := env(t, map[string]inprocess.Func{"test.block": func(ctx context.Context, _ json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		<-ctx.Done()
		close(stopped)
		return nil, ctx.Err()
	}, "test.echo": echo})
	activate(t, e, testTool("test.block", "test.block"))
	activate(t, e, testTool("test.echo", "test.echo"))
	c := invoke(t, e, alice(t), "test.block", map[string]any{}, map[string]any{"async": true})
	waitStatus(t, e, alice(t), c.ArtifactID, "RUNNING")
	const cancelQ = `mutation($id: ID!) { cancelToolCall(input: {id: $id}) { __typename ... on ToolCall { status error } ... on Problem { message } } }`
	var out struct {
		CancelToolCall struct {
			Typename string `json:"__typename"`
			Status   string
			Message  string
		}
	}
	e.OK(t, bob(t), cancelQ, map[string]any{"id": c.ArtifactID}, &out)
	// Alice's call is hers and the tool owner's: to bob it does not exist.
	if out.CancelToolCall.Typename != "NotFound" {
		t.Fatalf("bob cancelled alice's call: %+v", out.CancelToolCall)
	}
	e.OK(t, alice(t), cancelQ, map[string]any{"id": c.ArtifactID}, &out)
	if out.CancelToolCall.Status != "CANCELLED" {
		t.Fatalf("cancel: %+v", out.CancelToolCall)
	}
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the running tool was not stopped")
	}
	if s := waitStatus(t, e, alice(t), c.ArtifactID, "CANCELLED", "FAILED", "SUCCEEDED"); s != "CANCELLED" {
		t.Fatalf("after the tool stopped the call is %s", s)
	}
	done := invoke(t, e, alice(t), "test.echo", map[string]any{"value": 1})
	e.OK(t, alice(t), cancelQ, map[string]any{"id": done.ArtifactID}, &out)
	if out.CancelToolCall.Typename != "LifecycleViolation" {
		t.Fatalf("cancelled a finished call: %+v", out.CancelToolCall)
	}
	e.OK(t, alice(t), cancelQ, map[string]any{"id": "0190f000-0000-7000-8000-000000000000"}, &out)
	if out.CancelToolCall.Typename != "NotFound" {
		t.Fatalf("cancelled a missing call: %+v", out.CancelToolCall)
	}
}

// A call whose worker died (its heartbeat gone) is recovered: an idempotent
// tool with retries left runs again under a new job and succeeds; a tool
// that is not retried is failed with worker_lost. Nothing stays running.
func TestLostWorkerRecovery(t *testing.T) {
	var mu sync.Mutex
	starts := 0
	first := make(chan struct{})
	e := env(t, map[string]inprocess.Func{"test.flaky": func(ctx context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		mu.Lock()
		starts++
		n := starts
		mu.Unlock()
		if n == 1 {
			<-first // the run whose worker "dies"
			return nil, ctx.Err()
		}
		return args, nil
	}}, func(c *app.Config) { c.Tools.SweepEvery = -1 }) // the test sweeps itself
	defer close(first)
	for _, c := range []struct {
		name    string
		retries int
		want    string
	}{{"test.flaky", 1, "SUCCEEDED"}} {
		activate(t, e, testTool(c.name, c.name, func(m map[string]any) { m["idempotent"] = true; m["retries"] = c.retries }))
		call := invoke(t, e, alice(t), c.name, map[string]any{"value": 9}, map[string]any{"async": true})
		waitStatus(t, e, alice(t), call.ArtifactID, "RUNNING")
		// Its worker stops beating: name a worker that never beat.
		if _, err := e.Pool.Exec(t.Context(), `UPDATE artifacts SET content = jsonb_set(content, '{worker}', '"dead-worker"') WHERE type = 'tool_call' AND id = $1`, call.ArtifactID); err != nil {
			t.Fatal(err)
		}
		n, err := e.App.Dispatch.RecoverLost(t.Context())
		if err != nil || n != 1 {
			t.Fatalf("recovered %d: %v", n, err)
		}
		if s := waitStatus(t, e, alice(t), call.ArtifactID, "SUCCEEDED", "FAILED"); s != c.want {
			t.Fatalf("%s after recovery: %s", c.name, s)
		}
		var out struct{ ToolCall struct{ Attempt int } }
		e.OK(t, alice(t), `query($id: ID!) { toolCall(id: $id) { attempt } }`, map[string]any{"id": call.ArtifactID}, &out)
		if out.ToolCall.Attempt != 2 {
			t.Fatalf("attempt %d, want 2", out.ToolCall.Attempt)
		}
	}
	// Not retried: failed with the reason.
	activate(t, e, testTool("test.once", "test.flaky"))
	mu.Lock()
	starts = 0
	mu.Unlock()
	call := invoke(t, e, alice(t), "test.once", map[string]any{"value": 1}, map[string]any{"async": true})
	waitStatus(t, e, alice(t), call.ArtifactID, "RUNNING")
	if _, err := e.Pool.Exec(t.Context(), `UPDATE artifacts SET content = jsonb_set(content, '{worker}', '"dead-worker"') WHERE type = 'tool_call' AND id = $1`, call.ArtifactID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.App.Dispatch.RecoverLost(t.Context()); err != nil {
		t.Fatal(err)
	}
	var out struct {
		ToolCall struct {
			Status string
			Error  struct{ Code string }
		}
	}
	e.OK(t, alice(t), `query($id: ID!) { toolCall(id: $id) { status error } }`, map[string]any{"id": call.ArtifactID}, &out)
	if out.ToolCall.Status != "FAILED" || out.ToolCall.Error.Code != "worker_lost" {
		t.Fatalf("not retried: %+v", out.ToolCall)
	}
}
