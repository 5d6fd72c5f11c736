package main

import (
	"path/filepath"
	"testing"

	"github.com/scidex/substrate/internal/e2e"
)

// graphqlSSEDir is the Node project with the graphql-sse checks, relative to
// this package.
const graphqlSSEDir = "../../e2e/graphql-sse"

// graphqlSSEChecks are the checks e2e/graphql-sse/e2e.mjs must report as
// passed, by the start of their names.
var graphqlSSEChecks = []string{
	"next: a subscription receives the event of an artifact created over HTTP",
	"complete: a query is one next, then complete",
	"error: a document that does not validate is a next with its errors, then complete",
	"401: a bad token is refused before the stream opens",
}

// Server-Sent Events on /graphql against the real binary, driven by the
// graphql-sse protocol's reference client (the npm graphql-sse package) in
// distinct connections mode: the event of an artifact created over HTTP
// arrives as next, a query is a next and a complete, a document that fails
// validation is a next with its errors, and a bad token is a 401 before any
// stream opens. See e2e/graphql-sse/e2e.mjs.
func TestGraphQLSSE(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary and node")
	}
	node, npm := findNode(t)
	dir, err := filepath.Abs(graphqlSSEDir)
	if err != nil {
		t.Fatal(err)
	}
	npmCI(t, npm, dir)

	dataDir := e2e.DataDir(t)
	p := e2e.Start(t, e2e.Opts{DataDir: dataDir})
	tok := e2e.Token(t, dataDir, "ada", "contributor")

	runNodeChecks(t, node, dir, "e2e.mjs", []string{"SCIDEX_URL=" + p.URL, "SCIDEX_TOKEN=" + tok}, p.Log, graphqlSSEChecks)
}
