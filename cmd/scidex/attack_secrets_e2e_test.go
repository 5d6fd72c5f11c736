package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
	"github.com/scidex/substrate/internal/secrets"
)

// The secret every case below tries to get at. It has characters JSON
// escapes (<, &) and base64's alphabet differs on (/, +).
const attackSecret = "e2e-Sekret/Tok+en<&>-7f3c91d2"

// echoes are the encodings the echoing tool server answers the secret in.
var echoes = map[string]func(string) string{
	"unicode": func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		return b.String()
	},
	"base64": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"hex":    func(s string) string { return hex.EncodeToString([]byte(s)) },
	"url":    url.QueryEscape,
}

// R7 against the real binary started with a secrets file granting
// ATTACK_TOKEN to the tool units.echo for one host:port:
//
//	(a) a contributor registering a tool of their own that names the
//	    secret, pointed at their own server (registerTool, or createArtifact
//	    of type tool), is ValidationFailed naming the grant, and nothing is
//	    stored or sent;
//	(b) the granted tool's author moving its URL to another host:port, by
//	    registerTool or updateArtifact, is refused the same way;
//	(c) the granted tool's server echoing the secret as \u escapes, base64,
//	    hex or URL-encoding makes a FAILED call (secret_in_output) with no
//	    result, and neither another viewer reading the call back, nor the
//	    events, nor the server's log hold the secret in any form.
//
// A malformed grant stops the server at start, naming the entry.
func TestAttackSecrets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	var granted, thief atomic.Int64
	tool := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		granted.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+attackSecret {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		var in struct{ Enc string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "application/json")
		if enc, ok := echoes[in.Enc]; ok {
			// Written by hand: the \u form is no encoder's choice.
			fmt.Fprintf(w, `{"echo": "%s"}`, enc(attackSecret))
			return
		}
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(tool.Close)
	exfil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		thief.Add(1)
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(exfil.Close)
	toolHP, exfilHP := strings.TrimPrefix(tool.URL, "http://"), strings.TrimPrefix(exfil.URL, "http://")

	dir := t.TempDir()
	secretsFile := filepath.Join(dir, "secrets.json")
	file := fmt.Sprintf(`{"ATTACK_TOKEN": {"value": %q, "tools": ["units.echo"], "hosts": [%q]}, "LOOSE_TOKEN": "loose-value-0c1d2e3f"}`, attackSecret, toolHP)
	if err := os.WriteFile(secretsFile, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	jwt := "attack-secrets-jwt-0123456789abcdef-0123456789"
	env := []string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + jwt}
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env,
		Args: []string{"--secrets-file", secretsFile, "--http-post-allow", toolHP + "," + exfilHP}})
	admin := mint(t, jwt, "ada", auth.PermAdmin)
	alice := mint(t, jwt, "alice", auth.PermContributor)
	bob := mint(t, jwt, "bob", auth.PermContributor)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	match := matcherOf(t, attackSecret)

	if log := srv.Log(); !strings.Contains(log, "secrets granted to no tool") || !strings.Contains(log, "LOOSE_TOKEN") || strings.Contains(log, "loose-value") {
		t.Errorf("the start-up log does not warn of the ungranted secret by name (alone):\n%s", log)
	}

	manifest := func(name, rawURL string) map[string]any {
		return map[string]any{"name": name, "version": "1.0.0", "summary": "echoes", "runtime": "http_post",
			"runtime_config": map[string]any{"url": rawURL, "secret_ref": "ATTACK_TOKEN", "timeout_ms": 10000},
			"input_schema":   map[string]any{"type": "object"}, "output_schema": map[string]any{"type": "object"}}
	}
	type problems struct {
		Typename string `json:"__typename"`
		Problems []struct{ Path, Constraint, Message string }
	}
	refusedForGrant := func(what string, p problems, toolName, host string) {
		t.Helper()
		if p.Typename != "ValidationFailed" {
			t.Fatalf("%s: answered %s, want ValidationFailed", what, p.Typename)
		}
		for _, pr := range p.Problems {
			if pr.Path == "content.runtime_config.secret_ref" && pr.Constraint == "secret_granted" {
				for _, want := range []string{"ATTACK_TOKEN", "tool " + toolName, host, "secrets file"} {
					if !strings.Contains(pr.Message, want) {
						t.Errorf("%s: the problem %q does not say %q", what, pr.Message, want)
					}
				}
				return
			}
		}
		t.Fatalf("%s: no secret_granted problem at content.runtime_config.secret_ref: %+v", what, p.Problems)
	}
	const registerQ = `mutation($m: JSON!) { registerTool(input: {manifest: $m}) { __typename
	  ... on WriteSuccess { contentHash } ... on ValidationFailed { problems { path constraint message } } ... on Problem { message } } }`
	var reg struct {
		RegisterTool struct {
			problems
			ContentHash string
		}
	}

	// (a) A contributor's own tool naming the secret, at their server.
	if err := gql(ctx, srv.URL, alice, registerQ, map[string]any{"m": manifest("thief.exfil", exfil.URL+"/collect")}, &reg); err != nil {
		t.Fatal(err)
	}
	refusedForGrant("a tool of one's own naming the secret", reg.RegisterTool.problems, "thief.exfil", exfilHP)
	// The same tool written as a plain artifact is checked the same way.
	var created struct{ CreateArtifact problems }
	if err := gql(ctx, srv.URL, alice, `mutation($c: JSON!) { createArtifact(input: {type: "tool", id: "thief.exfil", title: "exfil", content: $c}) { __typename
	  ... on ValidationFailed { problems { path constraint message } } } }`, map[string]any{"c": manifest("thief.exfil", exfil.URL+"/collect")}, &created); err != nil {
		t.Fatal(err)
	}
	t.Logf("createArtifact of a tool naming the secret: %s", created.CreateArtifact.Typename)
	if created.CreateArtifact.Typename != "PermissionDenied" { // else refused for its grant
		refusedForGrant("createArtifact of a tool naming the secret", created.CreateArtifact, "thief.exfil", exfilHP)
	}
	var stored struct{ Artifact *struct{ ID string } }
	if err := gql(ctx, srv.URL, admin, `{ artifact(ref: "tool:thief.exfil") { id } }`, nil, &stored); err != nil || stored.Artifact != nil {
		t.Fatalf("the refused tool was stored: %v %+v", err, stored.Artifact)
	}

	// The granted tool, registered by alice and activated by an admin.
	reg.RegisterTool.ContentHash = ""
	if err := gql(ctx, srv.URL, alice, registerQ, map[string]any{"m": manifest("units.echo", tool.URL+"/echo")}, &reg); err != nil || reg.RegisterTool.ContentHash == "" {
		t.Fatalf("registering the granted tool: %v %+v", err, reg.RegisterTool)
	}
	if err := gql(ctx, srv.URL, admin, `mutation($h: String!) { updateArtifact(input: {ref: "tool:units.echo", baseContentHash: $h, lifecycleState: "active"}) { __typename } }`,
		map[string]any{"h": reg.RegisterTool.ContentHash}, &map[string]any{}); err != nil {
		t.Fatal(err)
	}

	// (b) Its author moves it to another host:port: by a new registration,
	// and by an update of its content.
	if err := gql(ctx, srv.URL, alice, registerQ, map[string]any{"m": manifest("units.echo", exfil.URL+"/echo")}, &reg); err != nil {
		t.Fatal(err)
	}
	refusedForGrant("registerTool moving the URL", reg.RegisterTool.problems, "units.echo", exfilHP)
	var cur struct {
		Artifact struct {
			ContentHash string
			Content     map[string]any
		}
	}
	if err := gql(ctx, srv.URL, alice, `{ artifact(ref: "tool:units.echo") { contentHash content } }`, nil, &cur); err != nil {
		t.Fatal(err)
	}
	moved := cur.Artifact.Content
	moved["runtime_config"] = map[string]any{"url": "http://localhost:" + strings.Split(toolHP, ":")[1] + "/echo", "secret_ref": "ATTACK_TOKEN"}
	var upd struct{ UpdateArtifact problems }
	if err := gql(ctx, srv.URL, alice, `mutation($h: String!, $c: JSON!) { updateArtifact(input: {ref: "tool:units.echo", baseContentHash: $h, content: $c}) { __typename
	  ... on ValidationFailed { problems { path constraint message } } } }`, map[string]any{"h": cur.Artifact.ContentHash, "c": moved}, &upd); err != nil {
		t.Fatal(err)
	}
	refusedForGrant("updateArtifact moving the URL to another name of the host", upd.UpdateArtifact, "units.echo", "localhost:")
	var now struct {
		Tool struct {
			Content struct {
				RuntimeConfig struct{ URL string } `json:"runtime_config"`
			}
		}
	}
	if err := gql(ctx, srv.URL, admin, `{ tool(name: "units.echo") { content } }`, nil, &now); err != nil || now.Tool.Content.RuntimeConfig.URL != tool.URL+"/echo" {
		t.Fatalf("the tool's URL after the refused moves: %v %q", err, now.Tool.Content.RuntimeConfig.URL)
	}
	if n := thief.Load(); n != 0 {
		t.Fatalf("the contributor's server received %d requests", n)
	}

	// The grant works: a call that echoes nothing succeeds with the token.
	type toolCall struct {
		ArtifactID string
		Status     string
		Result     json.RawMessage
		Error      map[string]any
	}
	const invokeQ = `mutation($a: JSON!) { invokeTool(input: {name: "units.echo", args: $a}) { __typename ... on ToolCall { artifactId status result error } ... on Problem { message } } }`
	var ok struct{ InvokeTool toolCall }
	if err := gql(ctx, srv.URL, alice, invokeQ, map[string]any{"a": map[string]any{"enc": "none"}}, &ok); err != nil || ok.InvokeTool.Status != "SUCCEEDED" {
		t.Fatalf("the granted call: %v %+v", err, ok.InvokeTool)
	}

	// (c) The server echoes the secret, in four encodings.
	var ids []string
	for enc := range echoes {
		var got struct{ InvokeTool toolCall }
		if err := gql(ctx, srv.URL, alice, invokeQ, map[string]any{"a": map[string]any{"enc": enc}}, &got); err != nil {
			t.Fatal(err)
		}
		c := got.InvokeTool
		if c.Status != "FAILED" || c.Error["code"] != "secret_in_output" || (len(c.Result) > 0 && string(c.Result) != "null") {
			t.Errorf("%s echo: %s %v result %s, want FAILED secret_in_output with no result", enc, c.Status, c.Error, c.Result)
		}
		ids = append(ids, c.ArtifactID)
	}
	// Read back by another viewer, and by an admin, whole: nothing holds it.
	for _, id := range ids {
		for who, tok := range map[string]string{"bob": bob, "ada": admin} {
			var raw json.RawMessage
			if err := gql(ctx, srv.URL, tok, `query($id: ID!) { toolCall(id: $id) { status result error args content history { edges { node { content } } } } }`,
				map[string]any{"id": id}, &raw); err != nil {
				t.Fatal(err)
			}
			if match.FoundIn(raw) {
				t.Errorf("%s reads the secret back from call %s: %s", who, id, raw)
			}
		}
	}
	// The events of every call, from the start of the log.
	ws := apitest.DialURL(t, srv.URL, nil)
	defer ws.Close()
	if err := ws.Init(map[string]any{"Authorization": "Bearer " + admin}); err != nil {
		t.Fatal(err)
	}
	ws.Subscribe("calls", `subscription { events(types: ["tool_call.*"], from: START) { type payload } }`, nil)
	for finished := 0; finished < len(ids)+1; {
		m := ws.Next("calls")
		if m.Type != "next" {
			t.Fatalf("the event subscription answered %+v", m)
		}
		if match.FoundIn(m.Payload) {
			t.Errorf("an event holds the secret: %s", m.Payload)
		}
		if strings.Contains(string(m.Payload), "tool_call.failed") || strings.Contains(string(m.Payload), "tool_call.completed") {
			finished++
		}
	}
	if match.FoundIn([]byte(srv.Log())) {
		t.Errorf("the server's log holds the secret")
	}
	if granted.Load() != int64(len(ids)+1) {
		t.Errorf("the granted server saw %d requests, want %d", granted.Load(), len(ids)+1)
	}
}

// A malformed grant stops the server at start, with a line naming the
// entry and not the value.
func TestAttackSecretsMalformedGrantStopsStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "secrets.json")
	if err := os.WriteFile(bad, []byte(`{"UNITS_TOKEN": {"value": "`+attackSecret+`", "tools": ["units.echo"], "hosts": ["units.example"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := e2e.CommandContext(ctx, t, "serve", "--addr", "127.0.0.1:0", "--data-dir", e2e.DataDir(t), "--secrets-file", bad)
	cmd.Env = append(cmd.Env, "DATABASE_URL="+dbtest.URL(t), "SCIDEX_JWT_SECRET=attack-secrets-jwt-0123456789abcdef-0123456789")
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("the server started (or hung) on a malformed grant: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "secret UNITS_TOKEN") || !strings.Contains(string(out), "hosts[0]: no port") {
		t.Errorf("the refusal does not name the entry:\n%s", out)
	}
	if matcherOf(t, attackSecret).FoundIn(out) {
		t.Errorf("the refusal prints the value:\n%s", out)
	}
}

// matcherOf is the matcher the runtime uses, for the tests' own checks.
func matcherOf(t *testing.T, value string) *secrets.Matcher {
	t.Helper()
	st, err := secrets.New(map[string]string{"X": value}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := st.Lookup("X")
	return v.Matcher()
}
