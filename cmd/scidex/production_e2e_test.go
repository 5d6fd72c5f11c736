package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/documents"
	"github.com/scidex/substrate/internal/e2e"
	"github.com/scidex/substrate/internal/livepage"
)

// SCIDEX_MODE=production refuses the development secret, even given as
// SCIDEX_JWT_SECRET (the raw bytes or the file's hex), naming what to set.
func TestProductionRefusesTheDevelopmentSecret(t *testing.T) {
	dataDir := e2e.DataDir(t)
	if out, err := e2e.Command(t, "token", "--sub", "ada", "--data-dir", dataDir).CombinedOutput(); err != nil {
		t.Fatalf("scidex token: %v\n%s", err, out) // makes the development secret
	}
	dev, err := auth.ReadSecret(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	hexText, _ := os.ReadFile(filepath.Join(dataDir, auth.SecretFileName))
	for name, secret := range map[string]string{"the file's text": strings.TrimSpace(string(hexText)), "its bytes": string(dev)} {
		if len(secret) < auth.MinSecretBytes || strings.ContainsRune(secret, 0) {
			continue // too short, or holding a NUL no environment variable can carry
		}
		status, stderr := runServe(t, []string{"SCIDEX_MODE=production", "SCIDEX_JWT_SECRET=" + secret}, []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir})
		if status != 2 || !strings.Contains(stderr, "SCIDEX_JWT_SECRET is the development secret of "+dataDir) || strings.Contains(stderr, secret) {
			t.Errorf("%s as SCIDEX_JWT_SECRET: exit %d\n%s", name, status, stderr)
		}
	}
}

// A production server: no GraphiQL, no introspection; for actors without
// the admin permission only registered documents run (by text or by hash),
// each refusal naming the document's hash and how to register it, and
// nothing written; admins run anything; `scidex documents push` checks and
// registers files; the server's own clients (MCP, the live page) work
// there with the documents it registered itself; the session cookie is
// Secure.
func TestProductionMode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	secret := "production-secret-0123456789abcdef-0123456789"
	db := dbtest.URL(t)
	env := []string{"DATABASE_URL=" + db, "SCIDEX_JWT_SECRET=" + secret, "SCIDEX_MODE=production"}
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env})
	ada := mint(t, secret, "ada", auth.PermContributor)
	root := mint(t, secret, "root", auth.PermAdmin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if !strings.Contains(srv.Log(), "mode=production") || strings.Contains(srv.Log(), "graphiql=") {
		t.Errorf("the start log does not say production, or still offers GraphiQL:\n%s", srv.Log())
	}

	post := func(token string, body map[string]any) (int, map[string]any) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/graphql", bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		b, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(b, &out)
		return resp.StatusCode, out
	}
	errorOf := func(out map[string]any) map[string]any {
		errs, _ := out["errors"].([]any)
		if len(errs) == 0 {
			return nil
		}
		e, _ := errs[0].(map[string]any)
		ext, _ := e["extensions"].(map[string]any)
		ext["message"] = e["message"]
		return ext
	}

	// GraphiQL and introspection are off.
	if resp, err := http.Get(srv.URL + "/graphiql/"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /graphiql/ in production: %v %v", resp.StatusCode, err)
	}
	if _, out := post(root, map[string]any{"query": `{ __schema { queryType { name } } }`}); errorOf(out) == nil {
		t.Errorf("introspection in production: %v", out)
	}

	// An unregistered document: refused for a contributor, nothing written.
	create := "mutation Create($in: CreateArtifactInput!) { createArtifact(input: $in) { __typename ... on WriteSuccess { ref } } }\n"
	vars := map[string]any{"in": map[string]any{"type": "hypothesis", "title": "in production", "content": map[string]any{"target_gene": "TREM2"}}}
	pool, err := pgxpool.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	count := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM artifacts WHERE title = 'in production'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	status, out := post(ada, map[string]any{"query": create, "variables": vars})
	e := errorOf(out)
	if e == nil || e["code"] != "PERMISSION_DENIED" || e["reason"] != "UNTRUSTED_DOCUMENT" || e["documentHash"] != documents.Hash(create) ||
		!strings.Contains(e["message"].(string), "scidex documents push") {
		t.Fatalf("an unregistered mutation for a contributor: %d %v", status, out)
	}
	if n := count(); n != 0 {
		t.Fatalf("the refused mutation wrote: %d", n)
	}
	// Only a hash, unregistered: what a persisted-query client retries on.
	_, out = post(ada, map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": documents.Hash(create)}}, "variables": vars})
	if e := errorOf(out); e == nil || e["message"] != "PersistedQueryNotFound" || e["reason"] != "PERSISTED_QUERY_NOT_FOUND" {
		t.Fatalf("an unregistered hash: %v", out)
	}
	// The automatic persisted queries register nothing for a contributor.
	_, out = post(ada, map[string]any{"query": create, "variables": vars, "extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": documents.Hash(create)}}})
	if e := errorOf(out); e == nil || e["reason"] != "UNTRUSTED_DOCUMENT" {
		t.Fatalf("an unregistered document with its hash (APQ registration): %v", out)
	}
	// An admin runs it.
	if _, out = post(root, map[string]any{"query": create, "variables": vars}); errorOf(out) != nil {
		t.Fatalf("an admin's ad hoc mutation: %v", out)
	}

	// scidex documents push: a bad file stops the push, naming it; nothing is registered.
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "create.graphql"), filepath.Join(dir, "typo.graphql")
	_ = os.WriteFile(good, []byte(create), 0o644)
	_ = os.WriteFile(bad, []byte("query Typo { artifact(ref: \"x:y\") { titel } }\n"), 0o644)
	push := func(files ...string) (string, int) {
		cmd := e2e.CommandContext(ctx, t, append([]string{"documents", "push"}, files...)...)
		cmd.Env = append(cmd.Env, "DATABASE_URL="+db, "SCIDEX_DATA_DIR="+e2e.DataDir(t))
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), cmd.ProcessState.ExitCode()
		}
		return string(out), 0
	}
	if out, code := push(good, bad); code != 2 || !strings.Contains(out, "typo.graphql") || !strings.Contains(out, `Cannot query field "titel"`) || !strings.Contains(out, "nothing was registered") {
		t.Fatalf("push with a typo: exit %d\n%s", code, out)
	}
	if _, out = post(ada, map[string]any{"query": create, "variables": vars}); errorOf(out) == nil {
		t.Fatalf("the refused push registered the good file: %v", out)
	}
	if out, code := push(good); code != 0 || !strings.Contains(out, documents.Hash(create)) || !strings.Contains(out, "registered") {
		t.Fatalf("push: exit %d\n%s", code, out)
	}
	if out, _ := push(good); !strings.Contains(out, "already registered") {
		t.Errorf("a second push of the same file: %s", out)
	}
	// Registered: by its text, and by its hash alone; one byte changed is another document.
	if _, out = post(ada, map[string]any{"query": create, "variables": vars}); errorOf(out) != nil {
		t.Fatalf("the registered document by text: %v", out)
	}
	if _, out = post(ada, map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": documents.Hash(create)}}, "variables": vars}); errorOf(out) != nil {
		t.Fatalf("the registered document by hash: %v", out)
	}
	if _, out = post(ada, map[string]any{"query": strings.TrimSpace(create), "variables": vars}); errorOf(out) == nil {
		t.Fatalf("the document without its last newline ran: %v", out)
	}

	// The live page's documents are the server's own: a reader's GET runs.
	q := url.Values{"query": {livepage.Documents()["live page head"]}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/graphql?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+ada)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"cursor"`) {
		t.Fatalf("the live page's head query in production: %d %s", resp.StatusCode, b)
	}

	// MCP: the tools' operations are registered; the ad hoc execute tool is not.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{ada}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_artifact", Arguments: vars2(vars)})
	if err != nil || res.IsError {
		t.Fatalf("create_artifact over MCP in production: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "execute", Arguments: map[string]any{"query": "{ me { id } }"}})
	if err == nil && !res.IsError {
		t.Errorf("execute ran an ad hoc query for a contributor in production: %+v", res)
	}

	// The session cookie is Secure, even on plain-HTTP loopback.
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/auth/session", nil)
	req.Header.Set("Authorization", "Bearer "+ada)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if !c.Secure {
			t.Errorf("cookie %s is not Secure in production", c.Name)
		}
	}
	if len(resp.Cookies()) != 2 {
		t.Errorf("POST /auth/session set %v", resp.Header.Values("Set-Cookie"))
	}
}

func vars2(v map[string]any) map[string]any { return map[string]any{"input": v["in"]} }
