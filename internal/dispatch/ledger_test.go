package dispatch_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/workpacket"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/inprocess"
)

// callContent reads a tool_call's stored record.
func callContent(t *testing.T, e *apitest.Env, id string) map[string]any {
	t.Helper()
	var raw []byte
	if err := e.Pool.QueryRow(context.Background(), `SELECT content FROM artifacts WHERE type = 'tool_call' AND id = $1`, id).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// runningCall waits until a call of tool is recorded running and returns its id.
func runningCall(t *testing.T, e *apitest.Env, tool string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var id string
		err := e.Pool.QueryRow(context.Background(), `SELECT id FROM artifacts WHERE type = 'tool_call' AND content->>'tool_name' = $1
		  AND content->>'status' = 'running'`, tool).Scan(&id)
		if err == nil {
			return id
		}
		time.Sleep(20 * time.Millisecond) // polling the database for a write another goroutine makes
	}
	t.Fatalf("no running call of %s within 30s", tool)
	return ""
}

// A synchronous call names the process running it, a process that beats;
// when that process stops beating, the sweep every process runs fails the
// call worker_lost (a synchronous call is never run again), and a replay of
// its idempotency key returns the failed call, not a running one.
func TestLostSyncCallIsRecovered(t *testing.T) {
	release := make(chan struct{})
	e := env(t, map[string]inprocess.Func{"test.hang": func(ctx context.Context, _ json.RawMessage, _ func(runtimes.Progress)) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{"value": 1}`), nil
	}})
	var once sync.Once
	stop := func() { once.Do(func() { close(release) }) }
	defer stop()
	activate(t, e, testTool("test.hang", "test.hang"))
	answered := make(chan *apitest.Response, 1)
	go func() {
		answered <- e.Post(t, alice(t), invokeQ, map[string]any{"n": "test.hang", "a": map[string]any{}, "k": "hang-1"})
	}()
	id := runningCall(t, e, "test.hang")
	rec := callContent(t, e, id)
	worker, _ := rec["worker"].(string)
	var alive bool
	if err := e.Pool.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM tool_workers WHERE id = $1 AND heartbeat_at > now() - interval '10 seconds')`, worker).Scan(&alive); err != nil {
		t.Fatal(err)
	}
	if worker == "" || !alive {
		t.Fatalf("the running synchronous call names process %q (alive %v), want this server's, beating", worker, alive)
	}
	// Its process dies: the call now names one that never beat.
	if _, err := e.Pool.Exec(t.Context(), `UPDATE artifacts SET content = jsonb_set(content, '{worker}', '"dead-process"') WHERE type = 'tool_call' AND id = $1`, id); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, e, alice(t), id, "FAILED", "SUCCEEDED", "QUEUED")
	c := invoke(t, e, alice(t), "test.hang", map[string]any{}, map[string]any{"k": "hang-1"})
	if c.ArtifactID != id || c.Status != "FAILED" || c.Error == nil || c.Error.Code != "worker_lost" || !c.Error.Setup {
		t.Fatalf("the replay of the lost call's key: %+v", c)
	}
	stop()
	<-answered // the run that outlived its record finds the call failed, and keeps that
	if s := waitStatus(t, e, alice(t), id, "FAILED", "SUCCEEDED"); s != "FAILED" {
		t.Fatalf("after the orphaned run returned, the call is %s", s)
	}
}

// A server with no queue workers still beats (it serves synchronous calls),
// on a ticker of its own: its tool_workers row is refreshed.
func TestServerWithoutWorkersBeats(t *testing.T) {
	e := env(t, nil, func(c *app.Config) { c.Queue.Workers = 0 })
	deadline := time.Now().Add(20 * time.Second)
	for {
		var beats bool
		if err := e.Pool.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM tool_workers WHERE heartbeat_at > started_at)`).Scan(&beats); err != nil {
			t.Fatal(err)
		}
		if beats {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a server with --tool-workers 0 did not beat within 20s")
		}
		time.Sleep(100 * time.Millisecond) // the beat is every 2 s: poll for it
	}
}

// The lost-call and expiry sweeps read the live-call index, not every
// tool_call ever made.
func TestSweepUsesLiveCallIndex(t *testing.T) {
	e := env(t, nil)
	tx, err := e.Pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(t.Context(), `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string]string{
		"lost": `EXPLAIN SELECT a.id FROM artifacts a WHERE a.type = 'tool_call' AND a.content->>'status' IN ('queued', 'running') AND a.content->>'status' = 'running'
		  AND NOT EXISTS (SELECT 1 FROM tool_workers w WHERE w.id = a.content->>'worker' AND w.heartbeat_at > now() - make_interval(secs => 10)) LIMIT 100`,
		"expired": `EXPLAIN SELECT a.id FROM artifacts a WHERE a.type = 'tool_call' AND a.content->>'status' IN ('queued', 'running') AND a.content->>'status' = 'queued'
		  AND a.content->>'expires_at' <= '2026-01-01T00:00:00.000000Z' LIMIT 100`,
	} {
		rows, err := tx.Query(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		if p := strings.Join(plan, "\n"); !strings.Contains(p, "artifacts_tool_call_live_idx") {
			t.Errorf("the %s sweep does not use the live-call index:\n%s", name, p)
		}
	}
}

// A finish whose record would exceed the content cap (args near the body
// limit plus a result near the output cap) ends failed result_too_large,
// without the result, instead of leaving the call running; a replay of its
// key returns the failed call. Args that alone leave the record no room are
// refused before anything runs, naming the sizes, and write nothing.
func TestOversizedFinishFailsResultTooLarge(t *testing.T) {
	e := env(t, map[string]inprocess.Func{"test.big": func(context.Context, json.RawMessage, func(runtimes.Progress)) (json.RawMessage, error) {
		return json.Marshal(map[string]any{"value": 1, "pad": strings.Repeat("r", 400<<10)})
	}})
	activate(t, e, testTool("test.big", "test.big"))
	args := map[string]any{"value": strings.Repeat("a", 700<<10)}
	for _, key := range []string{"big-1", ""} { // the recorded-first path and the fast path
		c := invoke(t, e, alice(t), "test.big", args, map[string]any{"k": key})
		if c.Typename != "ToolCall" || c.Status != "FAILED" || c.Error == nil || c.Error.Code != "result_too_large" || len(c.Result) != 0 && string(c.Result) != "null" {
			t.Fatalf("key %q: %+v", key, c)
		}
		if !strings.Contains(c.Error.Message, "1048576-byte content cap") {
			t.Errorf("the error does not name the cap: %s", c.Error.Message)
		}
		if key != "" {
			again := invoke(t, e, alice(t), "test.big", args, map[string]any{"k": key})
			if again.ArtifactID != c.ArtifactID || again.Status != "FAILED" {
				t.Fatalf("replay: %+v", again)
			}
		}
	}
	if n := count(t, e, "type = 'tool_call' AND content->>'status' IN ('running', 'queued')"); n != 0 {
		t.Fatalf("%d calls left unfinished", n)
	}
	before := count(t, e, "type = 'tool_call'")
	c := invoke(t, e, alice(t), "test.big", map[string]any{"value": strings.Repeat("a", store.MaxContentBytes-4<<10)}, map[string]any{"k": "big-2"})
	if c.Typename != "ValidationFailed" || len(c.Problems) != 1 || c.Problems[0].Path != "input.args" || c.Problems[0].Constraint != "maxBytes" ||
		!strings.Contains(c.Problems[0].Message, "args may be at most") {
		t.Fatalf("args that leave no room: %+v", c)
	}
	if after := count(t, e, "type = 'tool_call'"); after != before {
		t.Fatalf("a refused call wrote %d records", after-before)
	}
}

// A skill_call call whose packet nobody completes within the tool's wall
// time fails packet_expired, and its packet ends failed: no claim takes it
// afterwards.
func TestUnclaimedPacketExpires(t *testing.T) {
	e := apitest.New(t)
	m := skillTool()
	m["name"] = "review.quick"
	m["resource_caps"] = map[string]any{"wall_time_min": 0.02} // 1.2 s
	activate(t, e, m)
	c := invoke(t, e, alice(t), "review.quick", map[string]any{"query": "TREM2"})
	if c.Status != "QUEUED" {
		t.Fatalf("skill_call: %+v", c)
	}
	waitStatus(t, e, alice(t), c.ArtifactID, "FAILED", "SUCCEEDED", "CANCELLED")
	var out struct {
		ToolCall struct {
			Status string
			Error  struct{ Code string }
		}
	}
	e.OK(t, alice(t), `query($id: ID!) { toolCall(id: $id) { status error } }`, map[string]any{"id": c.ArtifactID}, &out)
	if out.ToolCall.Status != "FAILED" || out.ToolCall.Error.Code != "packet_expired" {
		t.Fatalf("the expired call: %+v", out.ToolCall)
	}
	if p := packet(t, e, carol(t), workpacket.PacketType+":"+c.ArtifactID); p.Status != "FAILED" {
		t.Fatalf("its packet: %+v", p)
	}
	if got := claim(t, e, carol(t), workpacket.PacketType+":"+c.ArtifactID, 0); got.Typename != "LifecycleViolation" {
		t.Fatalf("claimed an expired packet: %+v", got)
	}
}

// Completing a packet finishes its call through the same transition as
// every other finish: OnFinish is told (runSkill's stored skill_result).
func TestPacketCompletionTellsOnFinish(t *testing.T) {
	var mu sync.Mutex
	var finished []string
	e := apitest.New(t, apitest.Opts{App: func(c *app.Config) {
		next := c.Tools.OnFinish
		c.Tools.OnFinish = func(ctx context.Context, d *dispatch.Dispatcher, call *store.Artifact) {
			mu.Lock()
			finished = append(finished, call.ID)
			mu.Unlock()
			if next != nil {
				next(ctx, d, call)
			}
		}
	}})
	activate(t, e, skillTool())
	c := invoke(t, e, alice(t), "review.skeptic", map[string]any{"query": "TREM2"})
	ref := workpacket.PacketType + ":" + c.ArtifactID
	if got := claim(t, e, carol(t), ref, 0); got.Status != "CLAIMED" {
		t.Fatalf("claim: %+v", got)
	}
	res := result(t, e, carol(t))
	if got := complete(t, e, carol(t), map[string]any{"ref": ref, "status": "DONE", "resultRefs": []string{res}}); got.Status != "DONE" {
		t.Fatalf("complete: %+v", got)
	}
	if p := packet(t, e, alice(t), ref); p.Call == nil || p.Call.Status != "SUCCEEDED" {
		t.Fatalf("the caller's view of the completed packet: %+v", p)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(finished) != 1 || finished[0] != c.ArtifactID {
		t.Fatalf("OnFinish was told of %v, want the completed call %s", finished, c.ArtifactID)
	}
}

// A provenance stamp is an event clients can follow: the stamped artifact's
// ref, with the edges in its payload, seen by who may see the artifact.
func TestProvenanceStampEmitsEvent(t *testing.T) {
	e := env(t, nil)
	activate(t, e, manifest(t, "gate_run"))
	var h struct {
		CreateArtifact struct{ Ref string }
	}
	e.OK(t, alice(t), `mutation { createArtifact(input: {type: "hypothesis", title: "TREM2 loss raises amyloid load", content: {}}) { ... on WriteSuccess { ref } } }`, nil, &h)
	c := invoke(t, e, alice(t), "gate_run", map[string]any{"target": h.CreateArtifact.Ref, "gate": "artifact.basic"})
	if c.ResultRef == nil {
		t.Fatalf("gate_run: %+v", c)
	}
	res, _, _ := strings.Cut(*c.ResultRef, "@")
	var stamped []string
	until(t, e, res, "the stamp's event", func() bool {
		var poll struct {
			Poll struct {
				Events []struct {
					Type, Ref string
					Payload   struct {
						Stamps []struct{ Predicate, Target string }
					}
				}
			}
		}
		e.OK(t, bob(t), `{ poll(types: ["artifact.provenance_stamped"], from: START, limit: 100) { events { type ref payload } } }`, nil, &poll)
		for _, ev := range poll.Poll.Events {
			if strings.HasPrefix(ev.Ref, res) {
				for _, s := range ev.Payload.Stamps {
					stamped = append(stamped, s.Predicate+"→"+s.Target)
				}
				return true
			}
		}
		return false
	})
	if got := strings.Join(stamped, " "); got != "produced_by_actor→actor:alice produced_by_tool→tool:gate_run" {
		t.Fatalf("the event's stamps: %s", got)
	}
}
