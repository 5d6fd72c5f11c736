package mcp_test

import (
	"context"
	"io/fs"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/mcp"
)

// BenchmarkGetArtifact compares a tools/call of get_artifact over /mcp with
// the same query over /graphql, on one server (a first look at P9; bench/
// has the measurement of record).
func BenchmarkGetArtifact(b *testing.B) {
	e := apitest.New(b, apitest.Opts{})
	tok := apitest.Contributor(b, "ada")
	var c struct{ CreateArtifact struct{ Ref string } }
	e.OK(b, tok, `mutation { createArtifact(input: {type: "hypothesis", title: "bench", content: {target_gene: "TREM2", confidence: 0.5}}) { ... on WriteSuccess { ref } } }`, nil, &c)
	ref := unpinned(c.CreateArtifact.Ref)
	// The very document the tool sends.
	doc, err := fs.ReadFile(mcp.Operations(), "get_artifact.graphql")
	if err != nil {
		b.Fatal(err)
	}
	query := string(doc)
	b.Run("graphql", func(b *testing.B) {
		for b.Loop() {
			e.OK(b, tok, query, map[string]any{"ref": ref}, nil)
		}
	})
	b.Run("mcp", func(b *testing.B) {
		cl := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := cl.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.Server.URL + "/mcp", HTTPClient: benchClient(tok)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		for b.Loop() {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "get_artifact", Arguments: map[string]any{"ref": ref}})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}
