package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/server"
)

// Oversized bodies, deep queries and fan-out queries are refused with a clear error.
func TestRequestLimits(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.MaxBodyBytes = 64 << 10 }})
	tok := apitest.Contributor(t, "ada")

	big := `{"query":"{ me { id } }","variables":{"pad":"` + strings.Repeat("x", 70<<10) + `"}}`
	r := env.Raw(t, tok, "application/json", []byte(big))
	if r.Status != http.StatusRequestEntityTooLarge || len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, "larger than") {
		t.Errorf("big body: %d %s", r.Status, r.Raw)
	}
	// Without Content-Length the reader still stops at the limit.
	req, _ := http.NewRequest(http.MethodPost, env.Server.URL+"/graphql", struct{ *bytes.Reader }{bytes.NewReader([]byte(big))})
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Errorf("chunked big body: status %d", resp.StatusCode)
	}

	deep := "{ artifact(ref: \"hypothesis:x\") { " + strings.Repeat("links { edges { node { to { ", 4) + "id" + strings.Repeat(" } } } }", 4) + " } }"
	r = env.Post(t, tok, deep, nil)
	if len(r.Errors) != 1 || r.Errors[0].Code() != "VALIDATION_FAILED" || !strings.Contains(r.Errors[0].Message, "levels deep") {
		t.Errorf("deep query: %s", r.Raw)
	}

	wide := `{ artifacts(type: "hypothesis", first: 100) { edges { node { links(first: 100) { edges { node { to { links(first: 100) { edges { node { predicate } } } } } } } } } } }`
	r = env.Post(t, tok, wide, nil)
	if len(r.Errors) != 1 || r.Errors[0].Code() != "VALIDATION_FAILED" || !strings.Contains(r.Errors[0].Message, "complexity") {
		t.Errorf("fan-out query: %s", r.Raw)
	}

	r = env.Post(t, tok, `{ me { id `, nil)
	if len(r.Errors) != 1 || r.Errors[0].Code() != "VALIDATION_FAILED" {
		t.Errorf("syntax error: %s", r.Raw)
	}
	r = env.Raw(t, tok, "application/json", []byte(`{"query": `))
	if r.Status < 400 || len(r.Errors) == 0 {
		t.Errorf("malformed JSON body: %d %s", r.Status, r.Raw)
	}
}

// A fan-out through search is refused like the same fan-out through artifacts:
// search used to cost one item for a page of a hundred.
func TestCostLimitThroughSearch(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	for _, q := range []string{
		`{ search(query: "trem2", first: 100) { edges { node { artifact { links(first: 100) { edges { node { to { id title } } } } } } } } }`,
		`{ artifacts(type: "hypothesis", first: 100) { edges { node { links(first: 100) { edges { node { to { id title } } } } } } } }`,
	} {
		r := env.Post(t, tok, q, nil)
		if len(r.Errors) != 1 {
			t.Fatalf("%s: want one error, got %s", q, r.Raw)
		}
		e := r.Errors[0]
		if e.Code() != "VALIDATION_FAILED" || e.Extensions["requestId"] == "" || e.Extensions["reason"] != "COMPLEXITY_LIMIT_EXCEEDED" ||
			!strings.Contains(e.Message, "limit of 20000 (--max-complexity)") || !strings.Contains(e.Message, "smaller pages") {
			t.Errorf("%s: %s", q, r.Raw)
		}
	}
	// The default page is priced too: 20 hits of a page of 100 links each.
	r := env.Post(t, tok, `{ search(query: "trem2") { edges { node { artifact { links(first: 100) { edges { node { to { id title content } } } } } } } } }`, nil)
	if len(r.Errors) != 1 || r.Errors[0].Extensions["reason"] != "COMPLEXITY_LIMIT_EXCEEDED" {
		t.Errorf("default page: %s", r.Raw)
	}
}
