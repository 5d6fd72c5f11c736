package main

import (
	"context"
	"encoding/base64"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// The ledger never leaves a call running, against the real binary: (a) a
// synchronous call in flight when its server is killed with SIGKILL is
// failed worker_lost once a server runs again, and a replay of its
// idempotency key returns that failed call; (b) a shutdown past its timeout
// with a synchronous call in flight leaves no call running after the
// restart; (c) a call whose finished record would exceed the content cap
// (args near the body limit, a result near the output cap) ends failed
// result_too_large.
func TestLedgerLeavesNoCallRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	secret := "r15-ledger-secret-0123456789abcdef-0123456789"
	dbURL := dbtest.URL(t)
	env := []string{"DATABASE_URL=" + dbURL, "SCIDEX_JWT_SECRET=" + secret}
	dir := e2e.DataDir(t)
	start := func() *e2e.Proc {
		return e2e.Start(t, e2e.Opts{DataDir: dir, Env: env, Args: []string{"--shutdown-timeout", "1s"}})
	}
	srv := start()
	admin := mint(t, secret, "ada", auth.PermAdmin)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	sleeper := "#!/bin/sh\nsleep 120\necho '{}'\n"
	big := "#!/bin/sh\ncat >/dev/null\nprintf '{\"pad\":\"'\nhead -c 409600 /dev/zero | tr '\\0' r\nprintf '\"}'\n"
	for name, script := range map[string]string{"test.sleeper": sleeper, "test.big": big} {
		registerActive(ctx, t, srv.URL, admin, name, script, "")
	}

	// invoke starts a synchronous call with key on srv and returns at once:
	// its answer never comes when the server dies under it.
	invoke := func(url, name, key string, args map[string]any) {
		go func() {
			_ = gql(ctx, url, admin, `mutation($n: String!, $a: JSON!, $k: String) { invokeTool(input: {name: $n, args: $a, idempotencyKey: $k}) { __typename } }`,
				map[string]any{"n": name, "a": args, "k": key}, &map[string]any{})
		}()
	}
	// running is the id of the call of name now running (polled: the call's
	// request has not answered).
	running := func(name string) string {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			var id string
			if pool.QueryRow(ctx, `SELECT id FROM artifacts WHERE type = 'tool_call' AND content->>'tool_name' = $1 AND content->>'status' = 'running'`, name).Scan(&id) == nil {
				return id
			}
			time.Sleep(50 * time.Millisecond) // polling the database for the other process's write
		}
		t.Fatalf("no call of %s running within a minute", name)
		return ""
	}
	status := func(url, id string) (string, map[string]any) {
		var got struct {
			ToolCall struct {
				Status string
				Error  map[string]any
			}
		}
		if err := gql(ctx, url, admin, `query($id: ID!) { toolCall(id: $id) { status error } }`, map[string]any{"id": id}, &got); err != nil {
			t.Fatal(err)
		}
		return got.ToolCall.Status, got.ToolCall.Error
	}
	settled := func(url, id string) (string, map[string]any) {
		var s string
		var e map[string]any
		untilCall(t, url, admin, func() bool { s, e = status(url, id); return s != "RUNNING" && s != "QUEUED" })
		return s, e
	}

	// (a) SIGKILL mid-call.
	invoke(srv.URL, "test.sleeper", "ledger-kill", map[string]any{})
	killed := running("test.sleeper")
	_ = srv.Signal(t, syscall.SIGKILL, 30*time.Second)
	srv = start()
	if s, e := settled(srv.URL, killed); s != "FAILED" || e["code"] != "worker_lost" {
		t.Fatalf("(a) the killed server's call ended %s %v, want FAILED worker_lost", s, e)
	}
	var replay struct {
		InvokeTool struct{ ArtifactID, Status string }
	}
	if err := gql(ctx, srv.URL, admin, `mutation { invokeTool(input: {name: "test.sleeper", args: {}, idempotencyKey: "ledger-kill"}) { ... on ToolCall { artifactId status } } }`, nil, &replay); err != nil {
		t.Fatal(err)
	}
	if replay.InvokeTool.ArtifactID != killed || replay.InvokeTool.Status != "FAILED" {
		t.Fatalf("(a) the replay of the killed call's key answered %+v, want the failed call %s", replay.InvokeTool, killed)
	}

	// (b) SIGTERM, and the call outlives the shutdown timeout.
	invoke(srv.URL, "test.sleeper", "ledger-term", map[string]any{})
	cut := running("test.sleeper")
	if err := srv.Signal(t, syscall.SIGTERM, time.Minute); err != nil && !strings.Contains(err.Error(), "exit") {
		t.Logf("the server stopped with %v", err)
	}
	srv = start()
	if s, e := settled(srv.URL, cut); s == "SUCCEEDED" {
		t.Fatalf("(b) the call cut off by the shutdown ended %s %v", s, e)
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM artifacts WHERE type = 'tool_call' AND content->>'status' = 'running'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("(b) %d calls left running (%v)", left, err)
	}

	// (c) args of 700 KiB and a 400 KiB result: more than the content cap.
	var out struct {
		InvokeTool struct {
			Status string
			Error  map[string]any
		}
	}
	if err := gql(ctx, srv.URL, admin, `mutation($a: JSON!) { invokeTool(input: {name: "test.big", args: $a, idempotencyKey: "ledger-big"}) { ... on ToolCall { status error } } }`,
		map[string]any{"a": map[string]any{"pad": strings.Repeat("a", 700<<10)}}, &out); err != nil {
		t.Fatal(err)
	}
	if out.InvokeTool.Status != "FAILED" || out.InvokeTool.Error["code"] != "result_too_large" {
		t.Fatalf("(c) the oversized finish: %+v", out.InvokeTool)
	}
}

// registerActive registers a one-script bwrap tool as admin and makes it
// active: args are its command's arguments, network its resource_caps.network
// ("" for the default, none).
func registerActive(ctx context.Context, t *testing.T, url, admin, name, script, network string, args ...string) {
	t.Helper()
	caps := map[string]any{"wall_time_min": 1}
	if network != "" {
		caps["network"] = network
	}
	manifest := map[string]any{"name": name, "version": "1.0.0", "runtime": "bwrap",
		"runtime_config": map[string]any{"command": append([]any{"run.sh"}, toAny(args)...)},
		"input_schema":   map[string]any{"type": "object"}, "output_schema": map[string]any{"type": "object"},
		"resource_caps": caps}
	var reg struct {
		RegisterTool struct{ ContentHash, Message string }
	}
	files := []any{map[string]any{"path": "run.sh", "contentBase64": base64.StdEncoding.EncodeToString([]byte(script))}}
	if err := gql(ctx, url, admin, `mutation($m: JSON!, $f: [ToolFileInput!]) { registerTool(input: {manifest: $m, files: $f}) { ... on WriteSuccess { contentHash } ... on Problem { message } } }`,
		map[string]any{"m": manifest, "f": files}, &reg); err != nil || reg.RegisterTool.ContentHash == "" {
		t.Fatalf("register %s: %v %+v", name, err, reg)
	}
	if err := gql(ctx, url, admin, `mutation($r: Ref!, $h: String!) { updateArtifact(input: {ref: $r, baseContentHash: $h, lifecycleState: "active"}) { __typename } }`,
		map[string]any{"r": "tool:" + name, "h": reg.RegisterTool.ContentHash}, &map[string]any{}); err != nil {
		t.Fatal(err)
	}
}
