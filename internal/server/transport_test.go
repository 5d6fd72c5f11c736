package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/server"
)

// A request the transport refuses, before any operation runs, is still
// answered with a GraphQL error that has extensions.code and
// extensions.requestId (the X-Request-Id header's), with the status GraphQL
// over HTTP asks for, and writes nothing.
func TestTransportRefusals(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.MaxBodyBytes = 64 << 10 }})
	tok := apitest.Contributor(t, "ada")
	const create = `mutation { createArtifact(input: {type: "hypothesis", title: "smuggled", content: {}}) { __typename } }`
	createJSON, _ := json.Marshal(map[string]any{"query": create})
	get := func(raw string) string { return "/graphql?" + raw }
	q := func(vals ...string) string {
		v := url.Values{}
		for i := 0; i < len(vals); i += 2 {
			v.Set(vals[i], vals[i+1])
		}
		return v.Encode()
	}
	for _, c := range []struct {
		name, method, target, contentType, body string
		status                                  int
		message                                 string // part of the error's message
		allow                                   string // the Allow header, for a 405
	}{
		{"trailing garbage after the JSON body", "POST", "/graphql", "application/json", string(createJSON) + ` }garbage{`, 400, "after the JSON value", ""},
		{"two JSON objects back to back", "POST", "/graphql", "application/json", string(createJSON) + string(createJSON), 400, "after the JSON value", ""},
		{"a text/plain body", "POST", "/graphql", "text/plain", string(createJSON), 415, "application/json", ""},
		{"a form body", "POST", "/graphql", "application/x-www-form-urlencoded", "query=" + url.QueryEscape(create), 415, "application/json", ""},
		{"a body without a content type", "POST", "/graphql", "", string(createJSON), 415, "application/json", ""},
		{"a mutation over GET", "GET", get(q("query", create)), "", "", 405, "POST", "POST"},
		{"a subscription over GET", "GET", get(q("query", "subscription { events { id } }")), "", "", 405, "POST", "POST"},
		{"GET variables with trailing bytes", "GET", get(q("query", "query($r: Ref!) { artifact(ref: $r) { id } }", "variables", `{"r": "hypothesis:x"} }x`)), "", "", 400, "variables", ""},
		{"GET variables that are not JSON", "GET", get(q("query", "{ me { id } }", "variables", `{r:`)), "", "", 400, "variables", ""},
		{"GET extensions with trailing bytes", "GET", get(q("query", "{ me { id } }", "extensions", `{}{}`)), "", "", 400, "extensions", ""},
		{"a malformed query string", "GET", "/graphql?query=%zz", "", "", 400, "query string", ""},
		{"PUT", "PUT", "/graphql", "application/json", string(createJSON), 405, "GET or POST", "GET, POST"},
		{"DELETE", "DELETE", "/graphql", "", "", 405, "GET or POST", "GET, POST"},
		{"a body over the limit", "POST", "/graphql", "application/json", `{"query": "{ me { id } }", "x": "` + strings.Repeat("x", 70<<10) + `"}`, 413, "larger than the limit", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := env.Counts(t)
			req, _ := http.NewRequest(c.method, env.Server.URL+c.target, strings.NewReader(c.body))
			if c.body == "" {
				req.Body = nil
			}
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var got struct {
				Data   *json.RawMessage   `json:"data"`
				Errors []apitest.GQLError `json:"errors"`
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("%d: the response is not JSON: %s", resp.StatusCode, raw)
			}
			if resp.StatusCode != c.status || len(got.Errors) != 1 || got.Data != nil {
				t.Fatalf("want %d and one error without data, got %d %s", c.status, resp.StatusCode, raw)
			}
			e := got.Errors[0]
			if e.Code() != "VALIDATION_FAILED" || e.Extensions["requestId"] != resp.Header.Get("X-Request-Id") || e.Extensions["requestId"] == "" {
				t.Errorf("want code VALIDATION_FAILED and requestId %q: %s", resp.Header.Get("X-Request-Id"), raw)
			}
			if !strings.Contains(e.Message, c.message) {
				t.Errorf("the message does not mention %q: %s", c.message, e.Message)
			}
			if a := resp.Header.Get("Allow"); a != c.allow {
				t.Errorf("Allow: %q, want %q", a, c.allow)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			if after := env.Counts(t); !equalCounts(before, after) {
				t.Errorf("written: %v -> %v", before, after)
			}
		})
	}

	// One JSON value and trailing whitespace is fine.
	r := env.Raw(t, tok, "application/json", append(createJSON, " \n\t\r\n"...))
	if r.Status != http.StatusOK || len(r.Errors) != 0 || !bytes.Contains(r.Data, []byte("WriteSuccess")) {
		t.Errorf("trailing whitespace: %d %s", r.Status, r.Raw)
	}
}

// A subscribe over the websocket's cap is an error message whose error carries
// extensions.code and the request id, like every error outside a union.
func TestSubscriptionCapError(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.MaxSubscriptions = 1 }})
	ws := env.WS(t, apitest.Contributor(t, "ada"))
	ws.Subscribe("1", `subscription { events { id } }`, nil)
	ws.Subscribe("2", `subscription { events { id } }`, nil)
	m := ws.Next("2")
	var errs []apitest.GQLError
	if err := json.Unmarshal(m.Payload, &errs); err != nil || m.Type != "error" || len(errs) != 1 {
		t.Fatalf("want one error for 2, got %s %s", m.Type, m.Payload)
	}
	e := errs[0]
	if e.Code() != "VALIDATION_FAILED" || e.Extensions["requestId"] == nil || e.Extensions["requestId"] == "" ||
		!strings.Contains(e.Message, "max 1") || !strings.Contains(e.Message, "--max-subscriptions") {
		t.Errorf("cap error: %s", m.Payload)
	}
}
