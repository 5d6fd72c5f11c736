package dispatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/inprocess"
)

// The shipped checksum tool, registered from its bundle's manifest, runs for
// a contributor once active; the call is a tool_call in the ledger with its
// result, actuals and events.
func TestInvokeChecksum(t *testing.T) {
	e := env(t, nil)
	activate(t, e, manifest(t, "checksum"))
	c := invoke(t, e, alice(t), "checksum.sha256", map[string]any{"text": "abc"})
	if c.Typename != "ToolCall" || c.Status != "SUCCEEDED" {
		t.Fatalf("got %+v", c)
	}
	var res struct {
		SHA256 string
		Bytes  int
	}
	_ = json.Unmarshal(c.Result, &res)
	if res.SHA256 != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" || res.Bytes != 3 {
		t.Fatalf("result %s", c.Result)
	}
	if c.ToolVersion != "1.0.0" || !strings.HasPrefix(c.InputsHash, "sha256:") || c.DurationMs == nil || c.CostUsd == nil || len(c.OutputViolations) != 0 {
		t.Fatalf("ledger fields missing: %+v", c)
	}
	// The ledger answers toolCall(id), and the events tell the story in order.
	var got struct {
		ToolCall struct{ Status, ToolName string }
	}
	e.OK(t, alice(t), `query($id: ID!) { toolCall(id: $id) { status toolName } }`, map[string]any{"id": c.ArtifactID}, &got)
	if got.ToolCall.Status != "SUCCEEDED" || got.ToolCall.ToolName != "checksum.sha256" {
		t.Fatalf("toolCall: %+v", got)
	}
	var poll struct {
		Poll struct{ Events []struct{ Type, Ref string } }
	}
	e.OK(t, alice(t), `{ poll(types: ["tool_call.*"], from: START) { events { type ref } } }`, nil, &poll)
	var types []string
	for _, ev := range poll.Poll.Events {
		types = append(types, ev.Type)
	}
	// Recorded once, finished (the fast path of a free synchronous
	// in_process call): one event.
	if strings.Join(types, ",") != "tool_call.completed" {
		t.Fatalf("events %v", types)
	}
	// With an idempotency key the call is recorded running first.
	k := invoke(t, e, alice(t), "checksum.sha256", map[string]any{"text": "abd"}, map[string]any{"k": "k1"})
	if got := strings.Join(eventTypes(t, e, alice(t), k.ArtifactID), ","); got != "tool_call.started,tool_call.completed" {
		t.Fatalf("events of a keyed call: %s", got)
	}
}

// Arguments that break input_schema are refused with every problem's path,
// and nothing is recorded.
func TestInvokeBadArgsWritesNothing(t *testing.T) {
	e := env(t, nil)
	activate(t, e, manifest(t, "checksum"))
	before := e.Counts(t)
	c := invoke(t, e, alice(t), "checksum.sha256", map[string]any{"text": 42, "extra": true})
	if c.Typename != "ValidationFailed" {
		t.Fatalf("got %+v", c)
	}
	paths := map[string]bool{}
	for _, p := range c.Problems {
		paths[p.Path] = true
	}
	if !paths["input.args.text"] || !paths["input.args.extra"] {
		t.Fatalf("problems %+v", c.Problems)
	}
	if after := e.Counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused call wrote: %v -> %v", before, after)
	}
	if c := invoke(t, e, alice(t), "no.such.tool", map[string]any{}); c.Typename != "NotFound" {
		t.Fatalf("unknown tool: %+v", c)
	}
}

// An output that breaks output_schema is kept and its violations recorded;
// a failing tool is a FAILED call saying why; the tool's own failure is told
// from a setup failure.
func TestOutputViolationsAndFailures(t *testing.T) {
	e := env(t, map[string]inprocess.Func{
		"test.bad": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
			return json.RawMessage(`{"value": "not a number"}`), nil
		},
		"test.fail": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
			return nil, runtimes.Errorf(runtimes.CodeToolError, false, "the input file has no header row")
		},
	})
	activate(t, e, testTool("test.bad", "test.bad"))
	activate(t, e, testTool("test.fail", "test.fail"))
	c := invoke(t, e, alice(t), "test.bad", map[string]any{})
	if c.Status != "SUCCEEDED" || string(c.Result) != `{"value":"not a number"}` || len(c.OutputViolations) != 1 ||
		c.OutputViolations[0].Path != "result.value" {
		t.Fatalf("violating output: %+v", c)
	}
	f := invoke(t, e, alice(t), "test.fail", map[string]any{})
	if f.Status != "FAILED" || f.Error == nil || f.Error.Code != runtimes.CodeToolError || f.Error.Setup ||
		!strings.Contains(f.Error.Message, "no header row") {
		t.Fatalf("failing tool: %+v", f)
	}
}

// Only admins register in_process tools, and no one points one at a function
// the server was not built with.
func TestInProcessRegistrationIsAdminOnly(t *testing.T) {
	e := env(t, nil)
	r := register(t, e, alice(t), manifest(t, "checksum"))
	if r.RegisterTool.Typename != "PermissionDenied" || !strings.Contains(r.RegisterTool.Message, "admin") {
		t.Fatalf("contributor registered an in_process tool: %+v", r.RegisterTool)
	}
	r = register(t, e, admin(t), testTool("evil", "os.exec"))
	if r.RegisterTool.Typename != "ValidationFailed" || r.RegisterTool.Problems[0].Path != "content.runtime_config.function" {
		t.Fatalf("unregistered function: %+v", r.RegisterTool)
	}
	r = register(t, e, admin(t), testTool("nort", "x", func(m map[string]any) { m["runtime"] = "bwrap" }))
	if r.RegisterTool.Typename != "ValidationFailed" || r.RegisterTool.Problems[0].Path != "content.runtime" {
		t.Fatalf("runtime not on this server: %+v", r.RegisterTool)
	}
	if n := count(t, e, "type = 'tool' AND created_by <> '"+auth.System().ID+"'"); n != 0 { // the skills' and verbs' are the server's
		t.Fatalf("%d tools written by refused registrations", n)
	}
	// A reviewer may not activate an in_process tool; an admin may.
	ok := register(t, e, admin(t), manifest(t, "checksum"))
	var out struct {
		UpdateArtifact struct {
			Typename string `json:"__typename"`
		}
	}
	reviewer := apitestToken(t, "rita", "reviewer")
	var cur struct{ Artifact struct{ ContentHash string } }
	e.OK(t, reviewer, `{ artifact(ref: "tool:checksum.sha256") { contentHash } }`, nil, &cur)
	e.OK(t, reviewer, `mutation($h: String!) { updateArtifact(input: {ref: "tool:checksum.sha256", baseContentHash: $h, lifecycleState: "active"}) { __typename } }`,
		map[string]any{"h": cur.Artifact.ContentHash}, &out)
	if out.UpdateArtifact.Typename != "PermissionDenied" {
		t.Fatalf("a reviewer activated an in_process tool: %s", out.UpdateArtifact.Typename)
	}
	setState(t, e, admin(t), ok.RegisterTool.Ref, "active")
}

// A draft runs for its author and admins only; registering the same bundle
// again changes nothing; a changed manifest is a new version.
func TestDraftsAndVersions(t *testing.T) {
	e := env(t, map[string]inprocess.Func{"test.echo": echo})
	r := register(t, e, admin(t), testTool("test.echo", "test.echo"))
	if r.RegisterTool.Artifact.LifecycleState != "draft" {
		t.Fatalf("new tool is %q", r.RegisterTool.Artifact.LifecycleState)
	}
	if c := invoke(t, e, alice(t), "test.echo", map[string]any{"value": 1}); c.Typename != "PermissionDenied" {
		t.Fatalf("a draft ran for a non-author: %+v", c)
	}
	if c := invoke(t, e, admin(t), "test.echo", map[string]any{"value": 1}); c.Status != "SUCCEEDED" {
		t.Fatalf("a draft did not run for an admin: %+v", c)
	}
	again := register(t, e, admin(t), testTool("test.echo", "test.echo"))
	if again.RegisterTool.ContentHash != r.RegisterTool.ContentHash || !strings.HasPrefix(again.RegisterTool.Warnings[0], "unchanged") {
		t.Fatalf("re-registering the same manifest: %+v", again.RegisterTool)
	}
	v2 := register(t, e, admin(t), testTool("test.echo", "test.echo", func(m map[string]any) { m["summary"] = "echoes its value" }))
	if v2.RegisterTool.Artifact.Version != "1.0.1" {
		t.Fatalf("changed manifest registered as %q (%v)", v2.RegisterTool.Artifact.Version, v2.RegisterTool.Warnings)
	}
	setState(t, e, admin(t), v2.RegisterTool.Ref, "active")
	if c := invoke(t, e, alice(t), "test.echo", map[string]any{"value": 2}); c.ToolVersion != "1.0.1" {
		t.Fatalf("latest ran %q", c.ToolVersion)
	}
	if c := invoke(t, e, admin(t), "test.echo", map[string]any{"value": 2}, map[string]any{"v": "1.0.0"}); c.ToolVersion != "1.0.0" {
		t.Fatalf("pinned version ran %q: %+v", c.ToolVersion, c)
	}
}

func echo(_ context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
	return args, nil
}

// The same idempotency key returns the same ToolCall without running again.
func TestInvokeIdempotent(t *testing.T) {
	var mu sync.Mutex
	runs := 0
	e := env(t, map[string]inprocess.Func{"test.count": func(_ context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		mu.Lock()
		runs++
		mu.Unlock()
		return args, nil
	}})
	activate(t, e, testTool("test.count", "test.count"))
	a := invoke(t, e, alice(t), "test.count", map[string]any{"value": 7}, map[string]any{"k": "once"})
	b := invoke(t, e, alice(t), "test.count", map[string]any{"value": 7}, map[string]any{"k": "once"})
	if a.ArtifactID == "" || a.ArtifactID != b.ArtifactID || b.Status != "SUCCEEDED" || runs != 1 {
		t.Fatalf("replay: %s vs %s, %d runs", a.ArtifactID, b.ArtifactID, runs)
	}
	if n := count(t, e, "type = 'tool_call'"); n != 1 {
		t.Fatalf("%d tool calls", n)
	}
	if c := invoke(t, e, alice(t), "test.count", map[string]any{"value": 8}, map[string]any{"k": "once"}); c.Typename != "IdempotencyKeyReuse" {
		t.Fatalf("key reused for other args: %+v", c)
	}
}

// A client cannot write the ledger (R12), even an admin.
func TestLedgerIsServerOnly(t *testing.T) {
	e := env(t, nil)
	activate(t, e, manifest(t, "checksum"))
	c := invoke(t, e, alice(t), "checksum.sha256", map[string]any{"text": "x"})
	var cur struct{ Artifact struct{ ContentHash string } }
	e.OK(t, admin(t), `query($r: Ref!) { artifact(ref: $r) { contentHash } }`, map[string]any{"r": "tool_call:" + c.ArtifactID}, &cur)
	var out struct {
		UpdateArtifact struct {
			Typename string `json:"__typename"`
			Message  string
		}
	}
	e.OK(t, admin(t), `mutation($r: Ref!, $h: String!) { updateArtifact(input: {ref: $r, baseContentHash: $h, patch: [{op: "replace", path: "/status", value: "failed"}]}) {
	  __typename ... on Problem { message } } }`, map[string]any{"r": "tool_call:" + c.ArtifactID, "h": cur.Artifact.ContentHash}, &out)
	if out.UpdateArtifact.Typename != "PermissionDenied" || !strings.Contains(out.UpdateArtifact.Message, "server_only") {
		t.Fatalf("client rewrote the ledger: %+v", out.UpdateArtifact)
	}
}

// A deterministic tool with caching off never writes the cache (R11); with it
// on, the second identical call is answered from it and still recorded.
func TestCache(t *testing.T) {
	det := func(m map[string]any) { m["deterministic"] = true }
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("cache=", on), func(t *testing.T) {
			runs := 0
			e := env(t, map[string]inprocess.Func{"test.det": func(_ context.Context, args json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
				runs++
				return args, nil
			}}, func(c *app.Config) { c.Tools.Cache = on })
			activate(t, e, testTool("test.det", "test.det", det))
			a := invoke(t, e, alice(t), "test.det", map[string]any{"value": 3})
			b := invoke(t, e, alice(t), "test.det", map[string]any{"value": 3})
			entries, err := e.App.Dispatch.CacheEntries(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			cached := b.Cached != nil && *b.Cached
			switch {
			case !on && (entries != 0 || runs != 2 || cached):
				t.Fatalf("cache off: %d entries, %d runs, cached %v", entries, runs, cached)
			case on && (entries != 1 || runs != 1 || !cached || string(b.Result) != string(a.Result)):
				t.Fatalf("cache on: %d entries, %d runs, cached %v, %s vs %s", entries, runs, cached, a.Result, b.Result)
			}
			if n := count(t, e, "type = 'tool_call'"); n != 2 {
				t.Fatalf("%d calls recorded, want 2", n)
			}
		})
	}
}

// Rate limits: a configuration in any shape but {rate, burst} is refused;
// past the burst a call is RateLimited with a retry-after.
func TestRateLimits(t *testing.T) {
	for _, bad := range []string{`[1]`, `{"*": 5}`, `{"*": {"rate": 1}}`, `{"*": {"rate": 1, "burst": 1, "per": "minute"}}`,
		`{"*": {"rate": -1, "burst": 1}}`, `{"*": {"rate": 1, "burst": 0}}`, `{"Bad Name": {"rate": 1, "burst": 1}}`, `{"*": {"rate": "1", "burst": 1}}`} {
		if _, err := dispatch.ParseRateLimits(bad); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	limits, err := dispatch.ParseRateLimits(`{"*": {"rate": 0.001, "burst": 1}}`)
	if err != nil {
		t.Fatal(err)
	}
	e := env(t, nil, func(c *app.Config) { c.Tools.Limits = limits })
	activate(t, e, manifest(t, "checksum"))
	if c := invoke(t, e, alice(t), "checksum.sha256", map[string]any{"text": "1"}); c.Status != "SUCCEEDED" {
		t.Fatalf("first call: %+v", c)
	}
	c := invoke(t, e, alice(t), "checksum.sha256", map[string]any{"text": "2"})
	if c.Typename != "RateLimited" || c.RetryAfterMs == nil || *c.RetryAfterMs <= 0 {
		t.Fatalf("second call: %+v", c)
	}
	if c := invoke(t, e, bob(t), "checksum.sha256", map[string]any{"text": "3"}); c.Status != "SUCCEEDED" {
		t.Fatalf("another actor's bucket: %+v", c)
	}
}

// 64 concurrent invocations with usage persistence running alongside never
// deadlock (R11), and every call is counted.
func TestConcurrentCallsAndUsage(t *testing.T) {
	e := env(t, map[string]inprocess.Func{"test.echo": echo})
	activate(t, e, testTool("test.echo", "test.echo", func(m map[string]any) { m["cost_model"] = map[string]any{"fixed_usd": 0.01} }))
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	stop := make(chan struct{})
	go func() { // usage persisting while the calls run
		for {
			select {
			case <-stop:
				return
			default:
				e.App.Dispatch.FlushUsage(context.Background())
			}
		}
	}()
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := map[string]any{}
			if i%2 == 0 {
				key["k"] = fmt.Sprint("k", i) // half take the record-first path
			}
			if c := invoke(t, e, alice(t), "test.echo", map[string]any{"value": i}, key); c.Status != "SUCCEEDED" {
				errs <- fmt.Sprintf("call %d: %+v", i, c)
			}
		}()
	}
	wg.Wait()
	close(stop)
	close(errs)
	for s := range errs {
		t.Error(s)
	}
	e.App.Dispatch.FlushUsage(context.Background())
	var out struct {
		Tool struct {
			Usage struct {
				Calls, Succeeded int
				Reliability      float64
				MeanCostUsd      float64
			}
			Signals struct {
				Kinds []struct {
					Kind  string
					Value float64
				}
			}
		}
	}
	e.OK(t, alice(t), `{ tool(name: "test.echo") { usage { calls succeeded reliability meanCostUsd } signals { kinds { kind value } } } }`, nil, &out)
	u := out.Tool.Usage
	if u.Calls != 64 || u.Succeeded != 64 || u.Reliability != 1 || math.Abs(u.MeanCostUsd-0.01) > 1e-9 {
		t.Fatalf("usage %+v", u)
	}
	var usageCount float64
	for _, k := range out.Tool.Signals.Kinds {
		if k.Kind == "usage_count" {
			usageCount = k.Value
		}
	}
	if usageCount != 64 {
		t.Fatalf("usage_count signal %v, want 64 (%+v)", usageCount, out.Tool.Signals)
	}
}

// A call that costs something records its cost and debits the caller, in an
// event only the caller (and admins) see.
func TestCostAndBudgetDebit(t *testing.T) {
	e := env(t, map[string]inprocess.Func{"test.echo": echo})
	activate(t, e, testTool("test.paid", "test.echo", func(m map[string]any) { m["cost_model"] = map[string]any{"fixed_usd": 0.25} }))
	c := invoke(t, e, alice(t), "test.paid", map[string]any{"value": 1})
	if c.CostUsd == nil || *c.CostUsd != 0.25 {
		t.Fatalf("cost %v", c.CostUsd)
	}
	debits := func(token string) int {
		var poll struct {
			Poll struct {
				Events []struct {
					Type    string
					Payload map[string]any
				}
			}
		}
		e.OK(t, token, `{ poll(types: ["agent.budget_debited"], from: START) { events { type payload } } }`, nil, &poll)
		return len(poll.Poll.Events)
	}
	if n := debits(alice(t)); n != 1 {
		t.Fatalf("alice sees %d debits", n)
	}
	if n := debits(bob(t)); n != 0 {
		t.Fatalf("bob sees %d of alice's debits", n)
	}
}
