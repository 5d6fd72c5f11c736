package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
)

// POST follows GraphQL over HTTP: the status depends on the media type the
// client accepts, a request error has no data entry, a good response is
// valid JSON with its data, errors and extensions.
func TestPostStatusesAndBodies(t *testing.T) {
	env := apitest.New(t, apitest.Opts{})
	tok := apitest.Contributor(t, "ada")
	do := func(accept, body string) (int, string, map[string]json.RawMessage) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, env.Server.URL+"/graphql", bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var got map[string]json.RawMessage
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: response is not JSON: %s", body, raw)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), got
	}
	const gqlResp = "application/graphql-response+json"
	for _, c := range []struct {
		name, accept, body string
		status             int
		media              string
		data               bool // the response has a data entry
		code               string
	}{
		{"a query", "", `{"query": "{ me { id } }"}`, 200, "application/json", true, ""},
		{"a query, graphql-response+json", gqlResp, `{"query": "{ me { id } }"}`, 200, gqlResp, true, ""},
		{"a syntax error", "application/json", `{"query": "{ me { id "}`, 200, "application/json", false, "VALIDATION_FAILED"},
		{"a syntax error, graphql-response+json", gqlResp, `{"query": "{ me { id "}`, 400, gqlResp, false, "VALIDATION_FAILED"},
		{"an unknown field", "application/json", `{"query": "{ nope }"}`, 200, "application/json", false, "VALIDATION_FAILED"},
		{"an unknown field, graphql-response+json", gqlResp, `{"query": "{ nope }"}`, 400, gqlResp, false, "VALIDATION_FAILED"},
		{"no query", "application/json", `{"variables": {}}`, 400, "application/json", false, "VALIDATION_FAILED"},
		{"a body that is not JSON", gqlResp, `{"query": `, 400, gqlResp, false, "VALIDATION_FAILED"},
		{"*/* gets application/json", "*/*", `{"query": "{ me { id } }"}`, 200, "application/json", true, ""},
	} {
		status, media, got := do(c.accept, c.body)
		_, hasData := got["data"]
		if status != c.status || media != c.media || hasData != c.data {
			t.Errorf("%s: status %d %s, data entry %v; want %d %s %v (%v)", c.name, status, media, hasData, c.status, c.media, c.data, got)
		}
		if c.code != "" {
			var errs []apitest.GQLError
			if err := json.Unmarshal(got["errors"], &errs); err != nil || len(errs) != 1 || errs[0].Code() != c.code {
				t.Errorf("%s: errors %s, want one %s", c.name, got["errors"], c.code)
			}
		} else if string(got["data"]) != `{"me":{"id":"ada"}}` {
			t.Errorf("%s: data %s", c.name, got["data"])
		}
	}
}

// Automatic persisted queries over POST: a hash the server has not seen asks
// for the query; sent once with it, the hash alone is enough afterwards.
func TestPostPersistedQueries(t *testing.T) {
	env := apitest.New(t, apitest.Opts{})
	tok := apitest.Contributor(t, "ada")
	const query = "{ me { id } }"
	sum := sha256.Sum256([]byte(query))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
	send := func(body map[string]any) *apitest.Response {
		t.Helper()
		b, _ := json.Marshal(body)
		return env.Raw(t, tok, "application/json", b)
	}
	if r := send(map[string]any{"extensions": ext}); len(r.Errors) != 1 || r.Errors[0].Message != "PersistedQueryNotFound" {
		t.Fatalf("unknown hash: %d %s", r.Status, r.Raw)
	}
	if r := send(map[string]any{"query": query, "extensions": ext}); len(r.Errors) != 0 || string(r.Data) != `{"me":{"id":"ada"}}` {
		t.Fatalf("query with its hash: %d %s", r.Status, r.Raw)
	}
	if r := send(map[string]any{"extensions": ext}); len(r.Errors) != 0 || string(r.Data) != `{"me":{"id":"ada"}}` {
		t.Fatalf("hash alone, once known: %d %s", r.Status, r.Raw)
	}
}
