package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/mcp"
)

// BenchmarkGetArtifact compares a tools/call of get_artifact over /mcp with
// the same query over /graphql, on one server (a first look at P9; bench/mcp
// has the measurement of record). mcp-http posts a pre-built JSON-RPC body
// as bench/mcp does, so it measures the server; mcp-sdk-client adds the SDK
// client's own cost.
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
		body, _ := json.Marshal(map[string]any{"query": query, "operationName": "GetArtifact", "variables": map[string]any{"ref": ref}})
		for b.Loop() {
			benchPost(b, e.Server.URL+"/graphql", body, http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + tok}}, `"artifact":{`)
		}
	})
	b.Run("mcp-http", func(b *testing.B) {
		body := []byte(callBody("1", "get_artifact", `{"ref":"`+ref+`"}`))
		h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Authorization": {"Bearer " + tok},
			"Mcp-Protocol-Version": {revision}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"get_artifact"}}
		for b.Loop() {
			benchPost(b, e.Server.URL+"/mcp", body, h, `"structuredContent":{"artifact":{`)
		}
	})
	b.Run("mcp-sdk-client", func(b *testing.B) {
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

func benchPost(b *testing.B, url string, body []byte, h http.Header, want string) {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header = h.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte(want)) {
		b.Fatalf("%s answered %d: %s", url, resp.StatusCode, raw)
	}
}
