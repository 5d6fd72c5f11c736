package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/mcp"
	"github.com/scidex/substrate/internal/server"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// env is a real server (internal/apitest) with /mcp configured by opts.
func env(t *testing.T, opts mcp.Options) *apitest.Env {
	t.Helper()
	return apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.MCP = opts }})
}

// bearer adds a token to every request of the SDK client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an SDK client session on /mcp over streamable HTTP.
func connect(t *testing.T, e *apitest.Env, token string) (*sdk.ClientSession, error) {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "mcp-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.Server.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func mustConnect(t *testing.T, e *apitest.Env, token string) *sdk.ClientSession {
	t.Helper()
	cs, err := connect(t, e, token)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

// call calls a tool and fails the test on a protocol error.
func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// data decodes a successful result's structured content into v, after
// checking it against the tool's output schema.
func data(t *testing.T, cs *sdk.ClientSession, name string, res *sdk.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: error result: %s", name, text(res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	// The text copy is the data as JSON (the schema tool's is the SDL itself).
	if name != "schema" && !jsonEqual(text(res), string(raw)) {
		t.Errorf("%s: the text copy %s differs from the structured content %s", name, text(res), raw)
	}
	checkOutput(t, cs, name, raw)
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: decode %s: %v", name, raw, err)
	}
}

// checkOutput validates raw against the output schema the tool list gives.
func checkOutput(t *testing.T, cs *sdk.ClientSession, name string, raw []byte) {
	t.Helper()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if tl.Name != name {
			continue
		}
		s := compile(t, tl.OutputSchema)
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s: structured content does not match the output schema: %v\n%s", name, err, raw)
		}
		return
	}
	t.Fatalf("tool %s is not listed", name)
}

func compile(t *testing.T, schema any) *jsonschema.Schema {
	t.Helper()
	raw, _ := json.Marshal(schema)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("mem:///s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		t.Fatalf("schema does not compile: %v\n%s", err, raw)
	}
	return s
}

// toolError is the first error of an isError result.
func toolError(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want an error result, got %s", text(res))
	}
	if res.StructuredContent != nil {
		t.Errorf("an error result has structured content: %v", res.StructuredContent)
	}
	var body struct{ Errors []map[string]any }
	if err := json.Unmarshal([]byte(text(res)), &body); err != nil || len(body.Errors) == 0 {
		t.Fatalf("error result %q: %v", text(res), err)
	}
	return body.Errors[0]
}

func text(res *sdk.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); ok {
		return tc.Text
	}
	return ""
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	ra, _ := json.Marshal(x)
	rb, _ := json.Marshal(y)
	return bytes.Equal(ra, rb)
}

func equalCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}

type (
	serverOpts = server.Opts
	callParams = sdk.CallToolParams
)

// jsonUnmarshal decodes a successful result's structured content.
func jsonUnmarshal(res *sdk.CallToolResult, v any) error {
	if res.IsError {
		return errors.New(text(res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

func benchClient(token string) *http.Client { return &http.Client{Transport: bearer{token}} }
