package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/mcp"
	"github.com/scidex/substrate/internal/request"
)

const revision = "2026-07-28"

// legacy is the headers of a call on the 2025-11-25 revision: no
// Mcp-Method or Mcp-Name.
var legacy = map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Method": "", "Mcp-Name": ""}

// meta is the per-request _meta of the 2026-07-28 revision (SEP-2575).
const meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}`

func callBody(id, name, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"_meta":%s,"name":%q,"arguments":%s}}`, id, meta, name, args)
}

// wire is one HTTP request to /mcp: the body, the token, and the headers
// that differ from a well-formed tools/call of tool (an empty value removes
// the header).
type wire struct {
	name, token, tool, body string
	header                  map[string]string
	// fast: the fast path must answer it (otherwise it must leave it to the
	// SDK), so that the comparison covers what each side answers.
	fast bool
}

// answer is what a client sees of a response.
type answer struct {
	status       int
	contentType  string
	cacheControl string
	body         []byte
}

// The fast path answers exactly what the SDK alone answers: the same
// requests, good calls and bad ones of every kind, sent once through /mcp as
// served and once to the SDK handler alone, give the same status, headers
// and JSON (request ids aside, which differ per request).
func TestFastPathAnswersAsTheSDK(t *testing.T) {
	e := env(t, mcp.Options{Execute: true, Schema: true})
	ada := apitest.Contributor(t, "ada")
	viewer := apitest.Token(t, "val", auth.PermViewer)
	var c struct {
		CreateArtifact struct{ Ref, ContentHash string }
	}
	e.OK(t, ada, `mutation { createArtifact(input: {type: "hypothesis", title: "fast", content: {target_gene: "TREM2", confidence: 0.5}}) { ... on WriteSuccess { ref contentHash } } }`, nil, &c)
	ref := unpinned(c.CreateArtifact.Ref)
	refArg := fmt.Sprintf(`{"ref":%q}`, ref)
	stale := fmt.Sprintf(`{"input":{"ref":%q,"baseContentHash":"sha256:%s","title":"stale"}}`, ref, strings.Repeat("0", 64))
	e.OK(t, ada, `mutation($in: UpdateArtifactInput!) { updateArtifact(input: $in) { __typename } }`,
		map[string]any{"in": map[string]any{"ref": ref, "baseContentHash": c.CreateArtifact.ContentHash, "title": "fast, edited"}}, nil)

	cases := []wire{
		{name: "get_artifact", token: ada, tool: "get_artifact", body: callBody("1", "get_artifact", refArg), fast: true},
		{name: "string id", token: ada, tool: "get_artifact", body: callBody(`"a-1"`, "get_artifact", refArg), fast: true},
		{name: "large id", token: ada, tool: "get_artifact", body: callBody("123456789012345", "get_artifact", refArg), fast: true},
		{name: "escaped name", token: ada, tool: "get_artifact", body: strings.Replace(callBody("1", "get_artifact", refArg), `"name":"get_artifact"`, `"name":"get\u005fartifact"`, 1), fast: true},
		{name: "viewer reads", token: viewer, tool: "get_artifact", body: callBody("2", "get_artifact", refArg), fast: true},
		{name: "not found", token: ada, tool: "get_artifact", body: callBody("3", "get_artifact", `{"ref":"hypothesis:nope"}`), fast: true},
		{name: "pinned version", token: ada, tool: "get_artifact", body: callBody("4", "get_artifact", fmt.Sprintf(`{"ref":%q}`, c.CreateArtifact.Ref)), fast: true},
		{name: "history", token: ada, tool: "history", body: callBody("5", "history", refArg), fast: true},
		{name: "wrong argument type", token: ada, tool: "get_artifact", body: callBody("6", "get_artifact", `{"ref":5}`), fast: true},
		{name: "malformed ref", token: ada, tool: "get_artifact", body: callBody("7", "get_artifact", `{"ref":"not a ref"}`), fast: true},
		{name: "missing argument", token: ada, tool: "get_artifact", body: callBody("8", "get_artifact", `{}`), fast: true},
		{name: "no arguments", token: ada, tool: "me", body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"_meta":` + meta + `,"name":"me"}}`, fast: true},
		{name: "stale update is data", token: ada, tool: "update_artifact", body: callBody("10", "update_artifact", stale), fast: true},
		{name: "invalid content is data", token: ada, tool: "create_artifact",
			body: callBody("11", "create_artifact", `{"input":{"type":"hypothesis","title":"x","content":{"confidence":"high"}}}`), fast: true},
		{name: "execute", token: ada, tool: "execute", body: callBody("12", "execute", `{"query":"{ me { id } }"}`), fast: true},
		{name: "schema", token: ada, tool: "schema", body: callBody("13", "schema", `{"type":"Artifact"}`), fast: true},
		{name: "mutation by a viewer", token: viewer, tool: "update_artifact", body: callBody("14", "update_artifact", stale)},
		{name: "unknown tool", token: ada, tool: "no_such_tool", body: callBody("15", "no_such_tool", `{}`)},
		{name: "malformed JSON", token: ada, tool: "get_artifact", body: `{"jsonrpc":"2.0","id":16,"method":"tools/call",`},
		{name: "batch", token: ada, tool: "get_artifact", body: "[" + callBody("17", "get_artifact", refArg) + "]"},
		{name: "no protocol header", token: ada, tool: "get_artifact", body: callBody("18", "get_artifact", refArg), header: map[string]string{"Mcp-Protocol-Version": ""}},
		{name: "old protocol", token: ada, tool: "get_artifact", header: map[string]string{"Mcp-Protocol-Version": "2025-06-18", "Mcp-Method": "", "Mcp-Name": ""},
			body: fmt.Sprintf(`{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"get_artifact","arguments":%s}}`, refArg)},
		// 2025-11-25, what today's SDK clients negotiate: the fast path answers as the SDK does there.
		{name: "legacy get_artifact", token: ada, tool: "get_artifact", header: legacy, fast: true,
			body: fmt.Sprintf(`{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"get_artifact","arguments":%s}}`, refArg)},
		{name: "legacy string id", token: ada, tool: "get_artifact", header: legacy, fast: true,
			body: fmt.Sprintf(`{"jsonrpc":"2.0","id":"l-41","method":"tools/call","params":{"name":"get_artifact","arguments":%s}}`, refArg)},
		{name: "legacy stale update is data", token: ada, tool: "update_artifact", header: legacy, fast: true,
			body: fmt.Sprintf(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"update_artifact","arguments":%s}}`, stale)},
		{name: "legacy bad argument", token: ada, tool: "get_artifact", header: legacy, fast: true,
			body: `{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"get_artifact","arguments":{"ref":5}}}`},
		{name: "legacy no arguments", token: ada, tool: "me", header: legacy, fast: true,
			body: `{"jsonrpc":"2.0","id":44,"method":"tools/call","params":{"name":"me"}}`},
		{name: "legacy not found", token: ada, tool: "get_artifact", header: legacy, fast: true,
			body: `{"jsonrpc":"2.0","id":45,"method":"tools/call","params":{"name":"get_artifact","arguments":{"ref":"hypothesis:nope"}}}`},
		{name: "legacy mutation by a viewer", token: viewer, tool: "update_artifact", header: legacy,
			body: fmt.Sprintf(`{"jsonrpc":"2.0","id":46,"method":"tools/call","params":{"name":"update_artifact","arguments":%s}}`, stale)},
		{name: "legacy with _meta", token: ada, tool: "get_artifact", header: legacy,
			body: fmt.Sprintf(`{"jsonrpc":"2.0","id":47,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"get_artifact","arguments":%s}}`, refArg)},
		{name: "legacy with a session id", token: ada, tool: "get_artifact", header: map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Method": "", "Mcp-Name": "", "Mcp-Session-Id": "s-1"},
			body: fmt.Sprintf(`{"jsonrpc":"2.0","id":48,"method":"tools/call","params":{"name":"get_artifact","arguments":%s}}`, refArg)},
		{name: "legacy with Mcp-Method", token: ada, tool: "get_artifact", header: map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Name": ""},
			body: fmt.Sprintf(`{"jsonrpc":"2.0","id":49,"method":"tools/call","params":{"name":"get_artifact","arguments":%s}}`, refArg)},
		{name: "old _meta revision", token: ada, tool: "get_artifact",
			body: strings.Replace(callBody("20", "get_artifact", refArg), `protocolVersion":"2026-07-28"`, `protocolVersion":"2025-11-25"`, 1)},
		{name: "no _meta", token: ada, tool: "get_artifact", body: fmt.Sprintf(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"get_artifact","arguments":%s}}`, refArg)},
		{name: "no capabilities", token: ada, tool: "get_artifact",
			body: strings.Replace(callBody("22", "get_artifact", refArg), `,"io.modelcontextprotocol/clientCapabilities":{}`, ``, 1)},
		{name: "capabilities of the wrong type", token: ada, tool: "get_artifact",
			body: strings.Replace(callBody("23", "get_artifact", refArg), `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{"sampling":5}`, 1)},
		{name: "no Mcp-Name", token: ada, tool: "get_artifact", body: callBody("24", "get_artifact", refArg), header: map[string]string{"Mcp-Name": ""}},
		{name: "Mcp-Name mismatch", token: ada, tool: "get_artifact", body: callBody("25", "get_artifact", refArg), header: map[string]string{"Mcp-Name": "history"}},
		{name: "no Mcp-Method", token: ada, tool: "get_artifact", body: callBody("26", "get_artifact", refArg), header: map[string]string{"Mcp-Method": ""}},
		{name: "notification", token: ada, tool: "get_artifact", header: map[string]string{"Mcp-Method": "notifications/cancelled", "Mcp-Name": ""},
			body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`},
		{name: "tools/list", token: ada, tool: "", header: map[string]string{"Mcp-Method": "tools/list", "Mcp-Name": ""},
			body: `{"jsonrpc":"2.0","id":27,"method":"tools/list","params":{"_meta":` + meta + `}}`},
		{name: "arguments null", token: ada, tool: "get_artifact", body: callBody("28", "get_artifact", `null`)},
		{name: "fractional id", token: ada, tool: "get_artifact", body: callBody("1.5", "get_artifact", refArg)},
		{name: "extra params member", token: ada, tool: "get_artifact",
			body: strings.Replace(callBody("29", "get_artifact", refArg), `,"name":`, `,"requestState":"x","name":`, 1)},
		{name: "Accept without an event stream", token: ada, tool: "get_artifact", body: callBody("30", "get_artifact", refArg), header: map[string]string{"Accept": "application/json"}},
		{name: "wrong content type", token: ada, tool: "get_artifact", body: callBody("31", "get_artifact", refArg), header: map[string]string{"Content-Type": "text/plain"}},
		{name: "no token", token: "", tool: "get_artifact", body: callBody("32", "get_artifact", refArg)},
	}

	// In front of the real server: each request says, in a test header, which
	// way it goes, and its probe records whether the fast path answered it.
	var probes sync.Map
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, p := mcp.WithFastProbe(r.Context(), r.Header.Get("X-Test-Way") == "sdk")
		probes.Store(r.Header.Get("X-Test-Case"), p)
		e.App.Handler.ServeHTTP(w, r.WithContext(ctx))
	}))
	defer front.Close()

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sdkOnly := send(t, front.URL, c, "sdk")
			served := send(t, front.URL, c, "served")
			p, _ := probes.Load(c.name + "/served")
			if got := p.(*mcp.FastProbe).Answered(); got != c.fast {
				t.Errorf("the fast path answered it: %v, want %v", got, c.fast)
			}
			if served.status != sdkOnly.status || served.contentType != sdkOnly.contentType || served.cacheControl != sdkOnly.cacheControl {
				t.Errorf("served %d %q %q, the SDK alone %d %q %q", served.status, served.contentType, served.cacheControl,
					sdkOnly.status, sdkOnly.contentType, sdkOnly.cacheControl)
			}
			if a, b := normalized(served.body), normalized(sdkOnly.body); a != b {
				t.Errorf("served:\n%s\nthe SDK alone:\n%s", served.body, sdkOnly.body)
			}
			if c.fast && (served.status != http.StatusOK || !bytes.Contains(served.body, []byte(`"result"`))) {
				t.Errorf("a fast call answered %d %s, not a result", served.status, served.body)
			}
		})
	}
}

func send(t *testing.T, base string, c wire, way string) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(c.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", revision)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", c.tool)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	req.Header.Set("X-Test-Way", way)
	req.Header.Set("X-Test-Case", c.name+"/"+way)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), cacheControl: resp.Header.Get("Cache-Control"), body: body}
}

// normalized is body as canonical JSON, with JSON held in strings (a tool
// result's text) decoded too and request ids dropped; a body that is not
// JSON (the SDK's plain-text refusals) is itself.
func normalized(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return string(body)
	}
	out, _ := json.Marshal(normalize(v))
	return string(out)
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if k == "requestId" {
				delete(x, k)
				continue
			}
			x[k] = normalize(val)
		}
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
	case string:
		var inner any
		if strings.HasPrefix(x, "{") && json.Unmarshal([]byte(x), &inner) == nil {
			return normalize(inner)
		}
	}
	return v
}

// When the handler fails (the endpoint answered something that is not a
// GraphQL response), the fast path answers the SDK's JSON-RPC error.
func TestFastPathHandlerErrorAsTheSDK(t *testing.T) {
	s, err := mcp.New(mcp.Options{Endpoint: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	}), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rc := &request.Context{RequestID: "r1", Actor: auth.Actor{ID: "ada", Kind: "human", Permissions: []auth.Permission{auth.PermContributor}}}
	do := func(sdkOnly bool) (*httptest.ResponseRecorder, *mcp.FastProbe) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(callBody("1", "get_artifact", `{"ref":"hypothesis:x"}`)))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": revision, "Mcp-Method": "tools/call", "Mcp-Name": "get_artifact"} {
			req.Header.Set(k, v)
		}
		ctx, p := mcp.WithFastProbe(request.With(context.Background(), rc), sdkOnly)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req.WithContext(ctx))
		return rec, p
	}
	sdkOnly, _ := do(true)
	served, p := do(false)
	if !p.Answered() {
		t.Fatal("the fast path did not answer")
	}
	if served.Code != sdkOnly.Code || normalized(served.Body.Bytes()) != normalized(sdkOnly.Body.Bytes()) {
		t.Errorf("served %d %s\nthe SDK alone %d %s", served.Code, served.Body, sdkOnly.Code, sdkOnly.Body)
	}
	if !bytes.Contains(served.Body.Bytes(), []byte(`"error"`)) {
		t.Errorf("want a JSON-RPC error, got %s", served.Body)
	}
}

// A client that goes away does not cut the call off, on either path: the
// SDK detaches handlers from the request's cancellation, so a write runs to
// its end.
func TestFastPathCallOutlivesItsClientAsInTheSDK(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	seen := make(chan error, 1)
	s, err := mcp.New(mcp.Options{Endpoint: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		seen <- r.Context().Err()
		_, _ = io.WriteString(w, `{"data":{"me":null}}`)
	}), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rc := &request.Context{RequestID: "r1", Actor: auth.Actor{ID: "ada", Kind: "human", Permissions: []auth.Permission{auth.PermContributor}}}
	gone := make(chan struct{}, 1)
	handled := make(chan *mcp.FastProbe, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		context.AfterFunc(r.Context(), func() { gone <- struct{}{} })
		ctx, p := mcp.WithFastProbe(request.With(r.Context(), rc), r.Header.Get("X-Test-Way") == "sdk")
		s.ServeHTTP(w, r.WithContext(ctx))
		handled <- p
	}))
	defer srv.Close()
	for _, way := range []string{"sdk", "served"} {
		t.Run(way, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/mcp",
				strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":`+meta+`,"name":"me"}}`))
			for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
				"Mcp-Protocol-Version": revision, "Mcp-Method": "tools/call", "Mcp-Name": "me", "X-Test-Way": way} {
				req.Header.Set(k, v)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			<-entered
			cancel() // the client goes away while the call runs
			<-gone
			close(release)
			if err := <-seen; err != nil {
				t.Errorf("the call was cut off when its client went away: %v", err)
			}
			<-done
			probe := <-handled
			release = make(chan struct{})
			if want := way == "served"; probe.Answered() != want {
				t.Errorf("the fast path answered: %v, want %v", probe.Answered(), want)
			}
		})
	}
}
