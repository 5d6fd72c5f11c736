package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// The npm MCP client (@modelcontextprotocol/sdk) against the real binary,
// over /mcp (streamable HTTP) and `scidex mcp` (stdio): it lists the tools,
// creates and reads an artifact, gets a version conflict as data with its
// merge hint and retries with the suggested hash, reads the artifact as a
// resource, follows events, and on stdio is told by a resource subscription
// of another client's edit (e2e/mcp/client.mjs).
func TestMCPWithTheNPMClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary and node")
	}
	n := startForNode(t, "../../e2e/mcp", "mcp-npm-secret-0123456789abcdef-0123456789")
	node, dir, srv, db, secret, tok := n.node, n.dir, n.srv, n.db, n.secret, n.token
	// The stdio server (client.mjs starts it with this environment) gets its
	// own data dir: nothing of a test lands in the default /var/lib/scidex.
	env := []string{"SCIDEX_URL=" + srv.URL, "SCIDEX_TOKEN=" + tok, "SCIDEX_BIN=" + e2e.Binary(t),
		"DATABASE_URL=" + db, "SCIDEX_JWT_SECRET=" + secret, "SCIDEX_DATA_DIR=" + e2e.DataDir(t)}
	runNodeChecks(t, node, dir, "client.mjs", env, srv.Log, []string{"http lists", "http create and get", "http version conflict",
		"http reads the artifact as a resource", "http events", "http a queued substrate tool answers its status, structured", "http refuses resources/subscribe",
		"stdio lists", "stdio create and get", "stdio version conflict",
		"stdio reads the artifact as a resource", "stdio events", "stdio a queued substrate tool answers its status, structured",
		"stdio subscription: told of another client's edit", "done"})
}

// nodeRun is what a test driving an npm client against the real binary
// starts: node, the client's folder with its pinned packages installed, the
// server on the test database with a JWT secret, and a contributor token.
type nodeRun struct {
	node, dir, db, secret, token string
	srv                          *e2e.Proc
}

func startForNode(t *testing.T, folder, secret string) nodeRun {
	t.Helper()
	node, npm := findNode(t)
	dir, err := filepath.Abs(folder)
	if err != nil {
		t.Fatal(err)
	}
	npmCI(t, npm, dir)
	db := dbtest.URL(t)
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: []string{"DATABASE_URL=" + db, "SCIDEX_JWT_SECRET=" + secret}})
	tok, err := auth.Mint(auth.MintOpts{Secret: []byte(secret), Issuer: "scidex", Audience: "scidex", Subject: "ada",
		Kind: auth.KindAILocal, Permissions: []auth.Permission{auth.PermContributor}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return nodeRun{node: node, dir: dir, db: db, secret: secret, token: tok, srv: srv}
}
