package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// `scidex mcp` serves the generated tools on stdio to an MCP client that
// starts it, acting with SCIDEX_TOKEN on the database `serve` would use: the
// client lists the tools and creates and reads an artifact.
func TestMCPOnStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	secret := "mcp-stdio-secret-0123456789abcdef-0123456789"
	env := []string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + secret, "SCIDEX_DATA_DIR=" + e2e.DataDir(t)}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := e2e.CommandContext(ctx, t, "mcp")
	cmd.Env = append(cmd.Env, append(env, "SCIDEX_TOKEN="+mint(t, secret, "ada", auth.PermContributor))...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to scidex mcp: %v\n%s", err, stderr.String())
	}
	defer cs.Close()

	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range lt.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"get_artifact", "create_artifact", "update_artifact", "execute", "schema"} {
		if !names[want] {
			t.Errorf("tool %s not listed: %v", want, names)
		}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_artifact", Arguments: map[string]any{"input": map[string]any{
		"type": "hypothesis", "title": "over stdio", "content": map[string]any{"target_gene": "TREM2", "confidence": 0.5}}}})
	if err != nil || res.IsError {
		t.Fatalf("create_artifact: %v %+v\n%s", err, res, stderr.String())
	}
	var created struct{ CreateArtifact struct{ Ref string } }
	decode(t, res, &created)
	ref, _, _ := strings.Cut(created.CreateArtifact.Ref, "@")
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_artifact", Arguments: map[string]any{"ref": ref}})
	if err != nil || res.IsError {
		t.Fatalf("get_artifact: %v %+v", err, res)
	}
	var got struct {
		Artifact struct {
			Title     string
			CreatedBy struct{ ID string }
		}
	}
	decode(t, res, &got)
	if got.Artifact.Title != "over stdio" || got.Artifact.CreatedBy.ID != "ada" {
		t.Errorf("get_artifact: %+v", got.Artifact)
	}
}

// Without a token, or with one that does not verify, `scidex mcp` does not
// start, and says why.
func TestMCPOnStdioNeedsAValidToken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	secret := "mcp-stdio-secret-0123456789abcdef-0123456789"
	expired, err := auth.Mint(auth.MintOpts{Secret: []byte(secret), Issuer: "scidex", Audience: "scidex", Subject: "ada",
		Kind: auth.KindHuman, Permissions: []auth.Permission{auth.PermContributor}, TTL: time.Hour, Now: time.Now().Add(-2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ token, says string }{{"", "SCIDEX_TOKEN is required"}, {expired, "SCIDEX_TOKEN: "}} {
		cmd := e2e.Command(t, "mcp")
		cmd.Env = append(cmd.Env, "DATABASE_URL="+dbtest.URL(t), "SCIDEX_JWT_SECRET="+secret, "SCIDEX_TOKEN="+c.token, "SCIDEX_DATA_DIR="+e2e.DataDir(t))
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.says) {
			t.Errorf("token %q: %v\n%s", c.token, err, out)
		}
	}
}

func decode(t *testing.T, res *sdk.CallToolResult, v any) {
	t.Helper()
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// `scidex serve` serves the same tools on /mcp, stateless streamable HTTP,
// the bearer token per request.
func TestMCPOverHTTPOnServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	secret := "mcp-http-secret-0123456789abcdef-0123456789"
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: []string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + secret}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	hc := &http.Client{Transport: bearerTransport{token: mint(t, secret, "vera", auth.PermViewer)}}
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("negotiated %q", v)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_artifact", Arguments: map[string]any{"ref": "hypothesis:absent"}})
	if err != nil || res.IsError {
		t.Fatalf("get_artifact: %v %+v", err, res)
	}
	var got struct{ Artifact *struct{ Title string } }
	decode(t, res, &got)
	if got.Artifact != nil {
		t.Errorf("absent artifact: %+v", got.Artifact)
	}
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
