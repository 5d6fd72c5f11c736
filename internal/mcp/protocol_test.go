package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/mcp"
)

// rpc posts one raw JSON-RPC body to /mcp with headers, and decodes the
// answer (nil when it is not JSON).
func rpc(t *testing.T, e *apitest.Env, token, body string, headers map[string]string) (*http.Response, string, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.Server.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp, string(raw), out
}

// The transport's MUSTs over /mcp, on the revision today's SDK clients
// negotiate (2025-11-25): an unknown method is JSON-RPC -32601 with the
// request's id (was a plain-text 400); a page of a foreign origin is refused
// 403 even with a valid token (was served), unless the operator allows that
// origin; initialize does not advertise resources.subscribe where
// subscribing is refused (stateless HTTP); and answers that depend on the
// caller's token are cacheScope private (a participants-only artifact was
// public).
func TestProtocolMusts(t *testing.T) {
	e := env(t, mcp.Options{AllowedOrigins: []string{"https://lab.scidex.example"}})
	tok := apitest.Contributor(t, "alice")

	resp, raw, body := rpc(t, e, tok, `{"jsonrpc":"2.0","id":"q-7","method":"tools/frobnicate","params":{}}`, nil)
	errObj, _ := body["error"].(map[string]any)
	if resp.StatusCode != http.StatusOK || body["id"] != "q-7" || errObj == nil || errObj["code"] != float64(-32601) ||
		!strings.Contains(errObj["message"].(string), "tools/frobnicate") {
		t.Fatalf("an unknown method: %d %s", resp.StatusCode, raw)
	}

	for origin, want := range map[string]int{
		"https://evil.example":       http.StatusForbidden,
		"null":                       http.StatusForbidden,
		"https://lab.scidex.example": http.StatusOK,
		"http://" + strings.TrimPrefix(e.Server.URL, "http://"): http.StatusOK, // the server's own pages
	} {
		resp, raw, _ := rpc(t, e, tok, initialize, map[string]string{"Origin": origin})
		if resp.StatusCode != want {
			t.Errorf("Origin %s: %d, want %d: %s", origin, resp.StatusCode, want, raw)
		}
		if want == http.StatusForbidden && !strings.Contains(raw, "--allowed-origins") {
			t.Errorf("Origin %s: the refusal does not say what to do: %s", origin, raw)
		}
	}

	_, raw, body = rpc(t, e, tok, initialize, nil)
	caps, _ := body["result"].(map[string]any)["capabilities"].(map[string]any)
	res, _ := caps["resources"].(map[string]any)
	if res == nil || res["subscribe"] == true {
		t.Fatalf("initialize over /mcp advertises resources.subscribe, which it refuses: %s", raw)
	}
	// On stdio, where subscribing works, it is advertised.
	cs := sessionAs(t, e, mcp.Caller{Authorization: "Bearer " + tok, Writer: true}, nil)
	if ir := cs.InitializeResult(); ir.Capabilities.Resources == nil || !ir.Capabilities.Resources.Subscribe {
		t.Fatalf("stdio's initialize: %+v", ir.Capabilities.Resources)
	}

	// A message to alice only (participants-only), read as a resource.
	var sent struct {
		SendMessage struct{ Ref string }
	}
	e.OK(t, apitest.Token(t, "bob", auth.PermContributor), `mutation { sendMessage(input: {recipient: "actor:alice", subject: "private", body: "the draft numbers"}) { ... on WriteSuccess { ref } } }`, nil, &sent)
	if sent.SendMessage.Ref == "" {
		t.Fatal("no message sent")
	}
	typ, id, _ := strings.Cut(strings.Split(sent.SendMessage.Ref, "@")[0], ":")
	_, raw, body = rpc(t, e, tok, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"scidex://`+typ+`/`+id+`"}}`, nil)
	result, _ := body["result"].(map[string]any)
	if result == nil || result["cacheScope"] != "private" || !strings.Contains(raw, "the draft numbers") {
		t.Fatalf("a participants-only resource: %s", raw)
	}
	_, raw, body = rpc(t, e, tok, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`, nil)
	if result, _ := body["result"].(map[string]any); result == nil || result["cacheScope"] != "private" {
		t.Fatalf("tools/list, which depends on the caller's permission: %.300s", raw)
	}
}

// A JSON-RPC batch (the 2025-03-26 revision's) is one HTTP request, held to
// the one response cap: twelve reads of a 900 kB artifact under a 4 MiB cap
// answer the reads that fit and refuse the rest, saying why, instead of
// answering 25 MB (each read is twice its size: text and structured).
func TestBatchIsHeldToTheResponseCap(t *testing.T) {
	e := env(t, mcp.Options{MaxResponseBytes: 4 << 20})
	tok := apitest.Contributor(t, "alice")
	var out struct{ CreateArtifact struct{ Ref string } }
	e.OK(t, tok, `mutation($c: JSON!) { createArtifact(input: {type: "wiki_page", title: "big", content: $c}) { ... on WriteSuccess { ref } } }`,
		map[string]any{"c": map[string]any{"body": strings.Repeat("TREM2 ", 150_000)}}, &out)
	if out.CreateArtifact.Ref == "" {
		t.Fatal("no big artifact")
	}
	ref := strings.Split(out.CreateArtifact.Ref, "@")[0]
	var batch []string
	for i := range 12 {
		batch = append(batch, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"tools/call","params":{"name":"get_artifact","arguments":{"ref":"`+ref+`"}}}`)
	}
	body := "[" + strings.Join(batch, ",") + "]"
	resp, raw, _ := rpc(t, e, tok, body, map[string]string{"Mcp-Protocol-Version": "2025-03-26"})
	var answers []struct {
		ID     int
		Result struct {
			IsError bool
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal([]byte(raw), &answers); err != nil || resp.StatusCode != http.StatusOK || len(answers) != 12 {
		t.Fatalf("the batch: %d, %d bytes, %d answers (%v): %.300s", resp.StatusCode, len(raw), len(answers), err, raw)
	}
	if len(raw) > 5<<20 {
		t.Fatalf("the batch answered %d bytes, over the 4 MiB cap (plus one answer)", len(raw))
	}
	served, refused := 0, 0
	for _, a := range answers {
		switch {
		case !a.Result.IsError:
			served++
		case strings.Contains(a.Result.Content[0].Text, "response cap"):
			refused++
		default:
			t.Fatalf("answer %d: %.300s", a.ID, a.Result.Content[0].Text)
		}
	}
	if served == 0 || refused == 0 || served+refused != 12 {
		t.Fatalf("%d served, %d refused", served, refused)
	}
}
