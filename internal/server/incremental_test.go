package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/server"
)

const (
	// gqlgen defers the fields it resolves (links, me), not those it reads
	// off the object (title): @defer lets a server send deferred fields early.
	deferredPage = `{ artifacts(type: "hypothesis", first: 3, orderBy: {field: TITLE, direction: ASC}) {
			totalCount edges { node { ref title ... @defer(label: "links") { links { edges { node { predicate to { ref } } } } }
				createdBy { id } ... @defer(label: "signals") { signals { vote { score count } } } } } }
		me { id kind } }`
	plainPage = `{ artifacts(type: "hypothesis", first: 3, orderBy: {field: TITLE, direction: ASC}) {
			totalCount edges { node { ref title links { edges { node { predicate to { ref } } } }
				createdBy { id } signals { vote { score count } } } } }
		me { id kind } }`
	multipartAccept = "multipart/mixed;deferSpec=20220824, application/json"
)

// httpAsk sends query over POST (or GET) with the Accept header and returns
// the response and its body.
func httpAsk(t *testing.T, env *apitest.Env, token, method, accept, query string) (*http.Response, []byte) {
	t.Helper()
	var req *http.Request
	if method == http.MethodGet {
		req, _ = http.NewRequest(method, env.Server.URL+"/graphql?query="+url.QueryEscape(query), nil)
	} else {
		body, _ := json.Marshal(map[string]any{"query": query})
		req, _ = http.NewRequest(method, env.Server.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

// parts reads a multipart/mixed response's JSON parts.
func parts(t *testing.T, resp *http.Response, body []byte) []map[string]json.RawMessage {
	t.Helper()
	media, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || media != "multipart/mixed" || params["deferspec"] != "20220824" {
		t.Fatalf("Content-Type %q, want multipart/mixed with deferSpec=20220824 (%v)\n%s", resp.Header.Get("Content-Type"), err, body)
	}
	if !bytes.HasSuffix(body, []byte("\r\n--"+params["boundary"]+"--\r\n")) {
		t.Errorf("the body does not end with the closing delimiter: %q", body)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var out []map[string]json.RawMessage
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("part %d: %v\n%q", len(out), err, body)
		}
		if ct := p.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("part %d is %q", len(out), ct)
		}
		raw, _ := io.ReadAll(p)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("part %d is not JSON: %q", len(out), raw)
		}
		out = append(out, m)
	}
}

// applyIncremental merges a deferred group's data into data at path, as a
// client does.
func applyIncremental(t *testing.T, data map[string]any, path []any, add map[string]any) {
	t.Helper()
	var at any = data
	for _, el := range path {
		switch el := el.(type) {
		case string:
			at = at.(map[string]any)[el]
		case float64:
			at = at.([]any)[int(el)]
		}
	}
	obj, ok := at.(map[string]any)
	if !ok {
		t.Fatalf("path %v leads to %T", path, at)
	}
	for k, v := range add {
		obj[k] = v
	}
}

// An operation with @defer over GET and POST: a client that accepts
// multipart/mixed gets the initial payload and then each deferred group in a
// part of its own, which together are the operation's answer without @defer;
// any other client gets that answer in one response, byte for byte.
func TestDeferOverHTTP(t *testing.T) {
	env := apitest.New(t, apitest.Opts{})
	tok := apitest.Contributor(t, "ada")
	var refs []string
	for _, title := range []string{"TREM2 agonism", "APOE4 lipid", "CD33 inhibition", "microglia priming"} {
		refs = append(refs, createH(t, env, tok, map[string]any{"title": title, "content": map[string]any{}}).Ref)
	}
	mustWrite(t, env, tok, "addLink", "AddLinkInput", map[string]any{"from": unpinned(refs[1]), "to": unpinned(refs[0]), "predicate": "related_to"})
	_, plain := httpAsk(t, env, tok, http.MethodPost, "application/json", plainPage)
	if !bytes.Contains(plain, []byte(`"predicate":"related_to"`)) || bytes.Contains(plain, []byte(`"errors"`)) {
		t.Fatalf("the plain page: %s", plain)
	}

	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method+" multipart/mixed", func(t *testing.T) {
			resp, body := httpAsk(t, env, tok, method, multipartAccept, deferredPage)
			ps := parts(t, resp, body)
			if len(ps) < 2 {
				t.Fatalf("%d parts, want the initial payload and at least one more: %q", len(ps), body)
			}
			if string(ps[0]["hasNext"]) != "true" || ps[0]["incremental"] != nil {
				t.Errorf("the initial payload: %v", ps[0])
			}
			var data map[string]any
			if err := json.Unmarshal(ps[0]["data"], &data); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(ps[0]["data"]), `"links":{`) || strings.Contains(string(ps[0]["data"]), `"signals":{`) {
				t.Errorf("the initial payload has a deferred field: %s", ps[0]["data"])
			}
			labels := map[string]int{}
			for i, p := range ps[1:] {
				last := i == len(ps)-2
				if string(p["hasNext"]) != fmt.Sprint(!last) {
					t.Errorf("part %d: hasNext %s, want %v", i+1, p["hasNext"], !last)
				}
				var items []struct {
					Data   map[string]any
					Path   []any
					Label  string
					Errors []any
				}
				if err := json.Unmarshal(p["incremental"], &items); err != nil || len(items) == 0 {
					t.Fatalf("part %d: incremental %s (%v)", i+1, p["incremental"], err)
				}
				for _, it := range items {
					if len(it.Errors) > 0 {
						t.Errorf("part %d: errors %v", i+1, it.Errors)
					}
					labels[it.Label]++
					applyIncremental(t, data, it.Path, it.Data)
				}
			}
			if labels["links"] != 3 || labels["signals"] != 3 {
				t.Errorf("deferred groups by label: %v, want 3 of links and 3 of signals", labels)
			}
			var want struct{ Data map[string]any }
			if err := json.Unmarshal(plain, &want); err != nil {
				t.Fatal(err)
			}
			if a, b := canonicalJSON(t, data), canonicalJSON(t, want.Data); a != b {
				t.Errorf("the parts together:\n%s\nwithout @defer:\n%s", a, b)
			}
		})
		for _, accept := range []string{"application/json", "application/graphql-response+json", ""} {
			t.Run(method+" "+accept, func(t *testing.T) {
				resp, body := httpAsk(t, env, tok, method, accept, deferredPage)
				if resp.StatusCode != http.StatusOK || strings.HasPrefix(resp.Header.Get("Content-Type"), "multipart/") {
					t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				if !bytes.Equal(body, plain) {
					t.Errorf("the deferred page answered whole:\n%s\nwithout @defer:\n%s", body, plain)
				}
			})
		}
	}

	// An operation without @defer is one JSON response even to a client that
	// accepts multipart/mixed.
	resp, body := httpAsk(t, env, tok, http.MethodPost, multipartAccept, plainPage)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" || !bytes.Equal(body, plain) {
		t.Errorf("no @defer, multipart accepted: %s %s", ct, body)
	}
}

// The response cap bounds the sum of the deferred payloads: what is past it
// is one RESPONSE_TOO_LARGE error, streamed as the last part or answered
// instead of the data.
func TestDeferredPayloadsAreCapped(t *testing.T) {
	const limit = 3000
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.MaxResponseBytes = limit }})
	tok := apitest.Contributor(t, "ada")
	for i := range 8 {
		createH(t, env, tok, map[string]any{"title": fmt.Sprintf("%d %s", i, strings.Repeat("long ", 90)), "content": map[string]any{}})
	}
	q := `{ artifacts(type: "hypothesis", first: 8) { edges { node { ref ... @defer { history { edges { node { title } } } } } } } }`

	resp, body := httpAsk(t, env, tok, http.MethodPost, multipartAccept, q)
	ps := parts(t, resp, body)
	last := ps[len(ps)-1]
	if len(ps) < 2 || string(last["hasNext"]) != "false" || !bytes.Contains(last["incremental"], []byte(`"RESPONSE_TOO_LARGE"`)) {
		t.Fatalf("%d parts, the last %v", len(ps), last)
	}
	for i, p := range ps[1 : len(ps)-1] {
		if string(p["hasNext"]) != "true" || bytes.Contains(p["incremental"], []byte("RESPONSE_TOO_LARGE")) {
			t.Errorf("part %d of %d before the last: %v", i+1, len(ps), p)
		}
	}
	if n := len(body); n > 2*limit {
		t.Errorf("%d bytes streamed for a limit of %d", n, limit)
	}

	resp, body = httpAsk(t, env, tok, http.MethodPost, "application/json", q)
	var got struct {
		Data   json.RawMessage
		Errors []apitest.GQLError
	}
	if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if string(got.Data) != "null" || len(got.Errors) != 1 || got.Errors[0].Extensions["reason"] != "RESPONSE_TOO_LARGE" {
		t.Errorf("merged over the limit: %s", body)
	}
}

func canonicalJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v) // maps: sorted keys
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Over the websocket each deferred payload is held to the response cap as a
// query's is: one over it is replaced by RESPONSE_TOO_LARGE.
func TestDeferredPayloadOverTheWebsocketIsCapped(t *testing.T) {
	const limit = 3000
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.MaxResponseBytes = limit }})
	tok := apitest.Contributor(t, "ada")
	h := createH(t, env, tok, map[string]any{"title": "0 " + strings.Repeat("long ", 90), "content": map[string]any{"n": 0}})
	hash := h.ContentHash
	for i := 1; i <= 8; i++ { // nine versions of 450-character titles: a history of over 4 KB
		r := update(t, env, tok, map[string]any{"ref": unpinned(h.Ref), "baseContentHash": hash,
			"title": fmt.Sprintf("%d %s", i, strings.Repeat("long ", 90)), "patch": []any{map[string]any{"op": "replace", "path": "/n", "value": i}}})
		if r.Typename != "WriteSuccess" {
			t.Fatalf("update %d: %+v", i, r)
		}
		hash = r.ContentHash
	}
	ws := env.WS(t, tok)
	ws.Subscribe("d", `query($ref: Ref!) { artifact(ref: $ref) { ref ... @defer(label: "history") { history { edges { node { title } } } } } }`,
		map[string]any{"ref": unpinned(h.Ref)})
	var payloads []string
	for m := ws.Next("d"); m.Type != "complete"; m = ws.Next("d") {
		if m.Type != "next" {
			t.Fatalf("%s: %s", m.Type, m.Payload)
		}
		payloads = append(payloads, string(m.Payload))
	}
	if len(payloads) != 2 || strings.Contains(payloads[0], "RESPONSE_TOO_LARGE") || !strings.Contains(payloads[1], "RESPONSE_TOO_LARGE") {
		t.Errorf("payloads: %q", payloads)
	}
	for _, p := range payloads {
		if len(p) > limit {
			t.Errorf("a payload of %d bytes went out, the limit is %d", len(p), limit)
		}
	}

	// Over POST, answered whole: the group's error, the rest of the data.
	_, body := httpAsk(t, env, tok, http.MethodPost, "application/json",
		`{ artifact(ref: "`+unpinned(h.Ref)+`") { ref ... @defer { history { edges { node { title } } } } } }`)
	var got struct {
		Data struct {
			Artifact struct {
				Ref     string
				History any
			}
		}
		Errors []apitest.GQLError
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Data.Artifact.Ref == "" || got.Data.Artifact.History != nil || len(got.Errors) != 1 || got.Errors[0].Extensions["reason"] != "RESPONSE_TOO_LARGE" {
		t.Errorf("merged, a group over the limit: %s", body)
	}
}
