package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/mcp"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

// post sends one raw JSON-RPC message to /mcp.
func post(t *testing.T, e *apitest.Env, token, body string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.Server.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp, out
}

func firstCode(body map[string]any) string {
	errs, _ := body["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
	c, _ := ext["code"].(string)
	return c
}

// No token, or one that does not verify: HTTP 401 with a bearer challenge
// and the GraphQL-style error body, before any MCP message is read; the SDK
// client's connect fails.
func TestRefusedWithoutAValidToken(t *testing.T) {
	e := env(t, mcp.Options{})
	expired, err := auth.Mint(auth.MintOpts{Secret: apitest.Secret, Issuer: "scidex", Audience: "scidex", Subject: "ada",
		Kind: auth.KindHuman, Permissions: []auth.Permission{auth.PermContributor}, TTL: time.Hour, Now: time.Now().Add(-2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, token, says string }{
		{"no token", "", "needs a token"},
		{"expired", expired, "expired"},
		{"malformed", "not-a-jwt", "unauthenticated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := post(t, e, c.token, initialize)
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("status %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
			if firstCode(body) != "UNAUTHENTICATED" || !strings.Contains(strings.ToLower(mustString(body)), c.says) {
				t.Errorf("body %v", body)
			}
			if _, err := connect(t, e, c.token); err == nil {
				t.Errorf("the SDK client connected")
			}
		})
	}
	// A valid token gets through the same request.
	if resp, _ := post(t, e, apitest.Contributor(t, "ada"), initialize); resp.StatusCode != http.StatusOK {
		t.Errorf("with a token: %d", resp.StatusCode)
	}
}

func mustString(v any) string { b, _ := json.Marshal(v); return string(b) }

// With anonymous reads on, a caller without a token reads as a viewer: the
// same rule as /graphql.
func TestAnonymousReadsWhenTheServerAllowsThem(t *testing.T) {
	e := apitest.New(t, apitest.Opts{Server: func(o *serverOpts) { o.AnonymousRead = true }})
	cs := mustConnect(t, e, "")
	var got struct{ Artifact *struct{ Title string } }
	data(t, cs, "get_artifact", call(t, cs, "get_artifact", map[string]any{"ref": "hypothesis:nothing-here"}), &got)
	if got.Artifact != nil {
		t.Errorf("absent artifact: %+v", got.Artifact)
	}
	if msg := toolError(t, call(t, cs, "create_artifact", map[string]any{"input": map[string]any{"type": "hypothesis", "title": "x", "content": map[string]any{}}})); msg["code"] != "PERMISSION_DENIED" {
		t.Errorf("anonymous write: %v", msg)
	}
}

// A viewer calling a mutation tool (which it is not shown) is refused with
// PERMISSION_DENIED; nothing is written.
func TestViewerCallingAMutationIsRefused(t *testing.T) {
	e := env(t, mcp.Options{Execute: true})
	cs := mustConnect(t, e, apitest.Token(t, "vera", auth.PermViewer))
	before := e.Counts(t)
	res := call(t, cs, "create_artifact", map[string]any{"input": map[string]any{
		"type": "hypothesis", "title": "TREM2", "content": map[string]any{"target_gene": "TREM2", "confidence": 0.5}}})
	if got := toolError(t, res); got["code"] != "PERMISSION_DENIED" || !strings.Contains(got["message"].(string), "contributor") {
		t.Errorf("viewer's create: %v", got)
	}
	// Nor through execute.
	res = call(t, cs, "execute", map[string]any{"query": `mutation { createArtifact(input: {type: "hypothesis", title: "x", content: {}}) { __typename } }`})
	if got := toolError(t, res); got["code"] != "PERMISSION_DENIED" {
		t.Errorf("viewer's ad-hoc mutation: %v", got)
	}
	if after := e.Counts(t); !equalCounts(before, after) {
		t.Errorf("a refused call wrote: %v -> %v", before, after)
	}
}

// With mutations off, the mutation tools do not exist and execute runs no
// mutation, even for a contributor.
func TestMutationsOff(t *testing.T) {
	e := env(t, mcp.Options{Mutations: mcp.MutationsNone, Execute: true})
	tok := apitest.Contributor(t, "ada")
	cs := mustConnect(t, e, tok)
	before := e.Counts(t)
	if _, err := cs.CallTool(t.Context(), &callParams{Name: "create_artifact", Arguments: map[string]any{"input": map[string]any{
		"type": "hypothesis", "title": "TREM2", "content": map[string]any{"target_gene": "TREM2", "confidence": 0.5}}}}); err == nil ||
		!strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("create_artifact with mutations off: %v", err)
	}
	res := call(t, cs, "execute", map[string]any{"query": `mutation { createArtifact(input: {type: "hypothesis", title: "x", content: {target_gene: "X", confidence: 0.1}}) { __typename } }`})
	if got := toolError(t, res); got["code"] != "PERMISSION_DENIED" || !strings.Contains(got["message"].(string), "mutations: none") {
		t.Errorf("ad-hoc mutation with mutations off: %v", got)
	}
	if after := e.Counts(t); !equalCounts(before, after) {
		t.Errorf("a refused call wrote: %v -> %v", before, after)
	}
	lt, _ := cs.ListTools(t.Context(), nil)
	for _, tl := range lt.Tools {
		if tl.Name == "create_artifact" || tl.Name == "update_artifact" {
			t.Errorf("%s listed with mutations off", tl.Name)
		}
	}
}

// Arguments that break the input schema are refused before anything runs,
// each problem naming its path.
func TestBadArgumentsAreRefusedByTheSchema(t *testing.T) {
	e := env(t, mcp.Options{})
	cs := mustConnect(t, e, apitest.Contributor(t, "ada"))
	before := e.Counts(t)
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		path, rule string
	}{
		{"wrong type", "get_artifact", map[string]any{"ref": 42}, "ref", "type"},
		{"malformed ref", "get_artifact", map[string]any{"ref": "Not A Ref"}, "ref", "pattern"},
		{"missing", "get_artifact", map[string]any{}, "ref", "required"},
		{"unknown argument", "get_artifact", map[string]any{"ref": "hypothesis:x", "refs": 1}, "refs", "additionalProperties"},
		{"nested missing", "update_artifact", map[string]any{"input": map[string]any{"ref": "hypothesis:x"}}, "input.baseContentHash", "required"},
		{"nested malformed ref", "update_artifact", map[string]any{"input": map[string]any{"ref": "hypothesis:x@sha256:nothex", "baseContentHash": "h"}}, "input.ref", "pattern"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := toolError(t, call(t, cs, c.tool, c.args))
			if got["code"] != "VALIDATION_FAILED" || !strings.Contains(got["message"].(string), c.path) {
				t.Fatalf("refusal %v", got)
			}
			probs, _ := got["problems"].([]any)
			found := false
			for _, p := range probs {
				pm := p.(map[string]any)
				found = found || (pm["path"] == c.path && pm["constraint"] == c.rule)
			}
			if !found {
				t.Errorf("no problem at %s (%s): %v", c.path, c.rule, probs)
			}
		})
	}
	if after := e.Counts(t); !equalCounts(before, after) {
		t.Errorf("a refused call wrote: %v -> %v", before, after)
	}
}
