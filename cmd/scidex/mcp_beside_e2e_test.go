package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/e2e"
)

// The README's stdio set-up beside a running server, on the embedded
// default: `scidex serve` owns the data dir's PostgreSQL, and a desktop
// agent starts `SCIDEX_TOKEN=… scidex mcp` on the same data dir. The stdio
// server joins the running cluster (and says so on stderr) instead of
// exiting "data directory … is in use"; what the agent writes over stdio,
// the server serves at once; and when the agent goes, the server's database
// keeps running.
func TestMCPOnStdioBesideARunningServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	secret := "mcp-beside-secret-0123456789abcdef-0123456789"
	dataDir := e2e.DataDir(t)
	srv := e2e.Start(t, e2e.Opts{DataDir: dataDir, Env: []string{"SCIDEX_JWT_SECRET=" + secret}})
	token := mint(t, secret, "ada", auth.PermContributor)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := e2e.CommandContext(ctx, t, "mcp")
	cmd.Env = append(cmd.Env, "SCIDEX_JWT_SECRET="+secret, "SCIDEX_DATA_DIR="+dataDir, "SCIDEX_TOKEN="+token)
	var stderr lockedBuffer // written by the process's copier while the test reads it
	cmd.Stderr = &stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "desktop-agent", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("scidex mcp beside a running serve: %v\n%s", err, stderr.String())
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_artifact", Arguments: map[string]any{"input": map[string]any{
		"type": "hypothesis", "title": "written over stdio beside serve", "content": map[string]any{"target_gene": "TREM2"}}}})
	if err != nil || res.IsError {
		t.Fatalf("create_artifact over stdio: %v %+v\n%s", err, res, stderr.String())
	}
	var created struct{ CreateArtifact struct{ Ref string } }
	decode(t, res, &created)
	ref, _, _ := strings.Cut(created.CreateArtifact.Ref, "@")
	var got struct{ Artifact *struct{ Title string } }
	if err := gql(ctx, srv.URL, token, `query($r: Ref!) { artifact(ref: $r) { title } }`, map[string]any{"r": ref}, &got); err != nil ||
		got.Artifact == nil || got.Artifact.Title != "written over stdio beside serve" {
		t.Fatalf("the server reads %s: %+v %v", ref, got.Artifact, err)
	}
	if !strings.Contains(stderr.String(), "joined the embedded PostgreSQL of the scidex process running on this data dir") {
		t.Errorf("scidex mcp does not say it joined the running cluster:\n%s", stderr.String())
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	_ = cmd.Wait()
	if !strings.Contains(stderr.String(), "left the embedded PostgreSQL of the running scidex process running") {
		t.Errorf("scidex mcp did not say it left the cluster running:\n%s", stderr.String())
	}
	// The server's database outlives the agent.
	if err := gql(ctx, srv.URL, token, `query($r: Ref!) { artifact(ref: $r) { title } }`, map[string]any{"r": ref}, &got); err != nil || got.Artifact == nil {
		t.Fatalf("the server after the agent left: %+v %v\n%s", got.Artifact, err, srv.Log())
	}
}

// lockedBuffer is a strings.Builder safe to read while another goroutine
// writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
