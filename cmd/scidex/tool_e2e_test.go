package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// startWorker runs `scidex worker` and waits until it works the queue.
func startWorker(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := e2e.Command(t, append([]string{"worker"}, args...)...)
	// A data dir of its own (its sandbox cache lives there): nothing of a
	// test lands in the default /var/lib/scidex.
	cmd.Env = append(append(cmd.Env, "SCIDEX_DATA_DIR="+e2e.DataDir(t)), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan struct{})
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if !once && strings.Contains(sc.Text(), "worker: working queued tool calls") {
				once = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case <-ready:
	case <-time.After(90 * time.Second):
		t.Fatalf("scidex worker did not start:\n%s", log.String())
	}
	return cmd
}

func mint(t *testing.T, secret, sub string, perms ...auth.Permission) string {
	t.Helper()
	tok, err := auth.Mint(auth.MintOpts{Secret: []byte(secret), Issuer: "scidex", Audience: "scidex", Subject: sub,
		Kind: auth.KindHuman, Permissions: perms, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// A tool registered from its bundle with `scidex tool register`, invoked
// asynchronously through a server that works no jobs, is worked by a separate
// `scidex worker` on the same database (R10's queue half); registering the
// same bundle again changes nothing.
func TestToolRegisterAndWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	secret := "r10-tools-secret-0123456789abcdef-0123456789"
	env := []string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + secret}
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env, Args: []string{"--tool-workers", "0"}})
	admin := mint(t, secret, "ada", auth.PermAdmin)

	register := func() string {
		cmd := e2e.Command(t, "tool", "register", "../../tools/checksum/", "--url", srv.URL+"/graphql")
		cmd.Env = append(cmd.Env, "SCIDEX_TOKEN="+admin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("scidex tool register: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := register(); !strings.Contains(out, "checksum.sha256 1.0.0 (draft) tool:checksum.sha256@sha256:") {
		t.Fatalf("first registration said %q", out)
	}
	if out := register(); !strings.Contains(out, "unchanged") {
		t.Fatalf("second registration said %q", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var cur struct{ Artifact struct{ ContentHash string } }
	if err := gql(ctx, srv.URL, admin, `{ artifact(ref: "tool:checksum.sha256") { contentHash } }`, nil, &cur); err != nil {
		t.Fatal(err)
	}
	if err := gql(ctx, srv.URL, admin, `mutation($h: String!) { updateArtifact(input: {ref: "tool:checksum.sha256", baseContentHash: $h, lifecycleState: "active"}) { __typename } }`,
		map[string]any{"h": cur.Artifact.ContentHash}, &map[string]any{}); err != nil {
		t.Fatal(err)
	}
	alice := mint(t, secret, "alice", auth.PermContributor)
	var inv struct {
		InvokeTool struct{ ArtifactID, Status string }
	}
	if err := gql(ctx, srv.URL, alice, `mutation { invokeTool(input: {name: "checksum.sha256", args: {text: "abc"}, async: true}) { ... on ToolCall { artifactId status } } }`, nil, &inv); err != nil {
		t.Fatal(err)
	}
	if inv.InvokeTool.Status != "QUEUED" {
		t.Fatalf("async call is %q", inv.InvokeTool.Status)
	}
	// Nobody works the queue yet: the call stays queued until a worker starts.
	startWorker(t, env)
	var got struct {
		ToolCall struct {
			Status string
			Result map[string]any
		}
	}
	untilCall(t, srv.URL, alice, func() bool {
		if err := gql(ctx, srv.URL, alice, `query($id: ID!) { toolCall(id: $id) { status result } }`, map[string]any{"id": inv.InvokeTool.ArtifactID}, &got); err != nil {
			t.Fatal(err)
		}
		return got.ToolCall.Status == "SUCCEEDED"
	})
	if fmt.Sprint(got.ToolCall.Result["bytes"]) != "3" {
		t.Fatalf("result %v", got.ToolCall.Result)
	}
}

// R10: a worker killed (SIGKILL) in the middle of a call does not leave the
// call running forever: the worker's heartbeat stops, another worker's sweep
// finds the call (seconds later, not after the queue's one-hour rescue) and,
// the tool not being retryable, records it as failed with the reason.
func TestKilledWorkerLeavesNoCallRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	secret := "r10-kill-secret-0123456789abcdef-0123456789"
	env := []string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + secret}
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env, Args: []string{"--tool-workers", "0"}})
	admin := mint(t, secret, "ada", auth.PermAdmin)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	script := base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\nsleep 120\necho '{}'\n"))
	var reg struct {
		RegisterTool struct{ ContentHash, Message string }
	}
	manifest := map[string]any{"name": "test.sleeper", "version": "1.0.0", "runtime": "bwrap",
		"runtime_config": map[string]any{"command": []any{"sleep.sh"}},
		"input_schema":   map[string]any{"type": "object"}, "output_schema": map[string]any{"type": "object"},
		"resource_caps": map[string]any{"wall_time_min": 1}}
	if err := gql(ctx, srv.URL, admin, `mutation($m: JSON!, $f: [ToolFileInput!]) { registerTool(input: {manifest: $m, files: $f}) { ... on WriteSuccess { contentHash } ... on Problem { message } } }`,
		map[string]any{"m": manifest, "f": []any{map[string]any{"path": "sleep.sh", "contentBase64": script}}}, &reg); err != nil || reg.RegisterTool.ContentHash == "" {
		t.Fatalf("register: %v %+v", err, reg)
	}
	if err := gql(ctx, srv.URL, admin, `mutation($h: String!) { updateArtifact(input: {ref: "tool:test.sleeper", baseContentHash: $h, lifecycleState: "active"}) { __typename } }`,
		map[string]any{"h": reg.RegisterTool.ContentHash}, &map[string]any{}); err != nil {
		t.Fatal(err)
	}
	var inv struct{ InvokeTool struct{ ArtifactID string } }
	if err := gql(ctx, srv.URL, admin, `mutation { invokeTool(input: {name: "test.sleeper", args: {}, async: true}) { ... on ToolCall { artifactId } } }`, nil, &inv); err != nil {
		t.Fatal(err)
	}
	status := func() (string, map[string]any) {
		var got struct {
			ToolCall struct {
				Status string
				Error  map[string]any
			}
		}
		if err := gql(ctx, srv.URL, admin, `query($id: ID!) { toolCall(id: $id) { status error } }`, map[string]any{"id": inv.InvokeTool.ArtifactID}, &got); err != nil {
			t.Fatal(err)
		}
		return got.ToolCall.Status, got.ToolCall.Error
	}
	w1 := startWorker(t, env)
	untilCall(t, srv.URL, admin, func() bool { s, _ := status(); return s == "RUNNING" })
	_ = w1.Process.Kill() // SIGKILL, mid-call
	_ = w1.Wait()
	startWorker(t, env)
	var final string
	var failure map[string]any
	untilCall(t, srv.URL, admin, func() bool {
		final, failure = status()
		return final != "RUNNING" && final != "QUEUED"
	})
	if final != "FAILED" || failure["code"] != "worker_lost" || failure["setup"] != true {
		t.Fatalf("the call ended %s %v, want FAILED with worker_lost", final, failure)
	}
}

// untilCall waits for what a worker does in another process: it checks cond,
// and again after each tool_call event the token may see, read over the
// server's websocket from the start of the log, so that no event between a
// check and the wait is missed. It fails the test when no event comes within
// apitest.WSTimeout.
func untilCall(t *testing.T, url, token string, cond func() bool) {
	t.Helper()
	ws := apitest.DialURL(t, url, nil)
	defer ws.Close()
	if err := ws.Init(map[string]any{"Authorization": "Bearer " + token}); err != nil {
		t.Fatal(err)
	}
	ws.Subscribe("calls", `subscription { events(types: ["tool_call.*"], from: START) { type } }`, nil)
	for !cond() {
		if m := ws.Next("calls"); m.Type != "next" {
			t.Fatalf("the event subscription answered %+v", m)
		}
	}
}
