package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/schema"
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

// A response larger than the limit is one error naming the limit and the way
// out, not tens of megabytes: aliases multiply what one field returns.
func TestResponseLimit(t *testing.T) {
	const limit = 256 << 10
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.MaxResponseBytes = limit }})
	tok := apitest.Contributor(t, "ada")
	var created struct {
		CreateArtifact struct{ Ref string }
	}
	mechanism := strings.Repeat("microglia phagocytose amyloid plaques ", 50<<10/38) // 50 KB
	env.OK(t, tok, `mutation($c: JSON!) { createArtifact(input: {type: "hypothesis", title: "big", content: $c}) { ... on WriteSuccess { ref } } }`,
		map[string]any{"c": map[string]any{"mechanism": mechanism}}, &created)
	aliases := func(n int, field string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, " a%d: %s", i, field)
		}
		return b.String() + " }"
	}
	content := `artifact(ref: "` + created.CreateArtifact.Ref + `") { content }`
	typed := `artifact(ref: "` + created.CreateArtifact.Ref + `") { ... on Hypothesis { mechanism } }`

	// Under the limit: served whole.
	if r := env.Post(t, tok, aliases(4, content), nil); len(r.Errors) != 0 || len(r.Raw) < 4*50<<10 {
		t.Fatalf("4 aliases: %d bytes, %.300s", len(r.Raw), r.Raw)
	}
	for _, q := range []string{
		aliases(10, content),                // 500 KB of content
		aliases(10, typed),                  // the same through a typed field
		aliases(30, `schemas { document }`), // ~3 MB of schema documents
	} {
		r := env.Post(t, tok, q, nil)
		if len(r.Raw) > 4<<10 {
			t.Errorf("%.60s…: the response is %d bytes", q, len(r.Raw))
		}
		if r.Status != http.StatusOK || string(r.Data) != "null" || len(r.Errors) != 1 {
			t.Fatalf("%.60s…: %d %.500s", q, r.Status, r.Raw)
		}
		e := r.Errors[0]
		if e.Code() != "VALIDATION_FAILED" || e.Extensions["reason"] != "RESPONSE_TOO_LARGE" || e.Extensions["requestId"] == nil ||
			!strings.Contains(e.Message, fmt.Sprintf("limit of %d bytes (--max-response-bytes)", limit)) || !strings.Contains(e.Message, "fewer aliases") {
			t.Errorf("%.60s…: %s", q, r.Raw)
		}
	}

	// A mutation's writes are done even when its answer is dropped, and it says so.
	before := env.Count(t, "artifacts")
	var m strings.Builder
	m.WriteString("mutation($c: JSON!) {")
	for i := range 6 {
		fmt.Fprintf(&m, ` c%d: createArtifact(input: {type: "hypothesis", title: "copy %d", content: $c}) { ... on WriteSuccess { artifact { content } } }`, i, i)
	}
	m.WriteString(" }")
	r := env.Post(t, tok, m.String(), map[string]any{"c": map[string]any{"mechanism": mechanism}})
	if len(r.Errors) != 1 || r.Errors[0].Extensions["reason"] != "RESPONSE_TOO_LARGE" || !strings.Contains(r.Errors[0].Message, "the mutation ran") {
		t.Errorf("mutation: %.500s", r.Raw)
	}
	if n := env.Count(t, "artifacts"); n != before+6 {
		t.Errorf("the mutation wrote %d artifacts, want 6", n-before)
	}
}

// On a cold registry, concurrent reads of every schema (aliases of `schemas`
// in one query) compile each document once and share it: each compiled its
// own copy, 15 s and 3.3 GB for 390 aliases of `schemas { type }`.
func TestColdSchemaRegistryCompilesOnce(t *testing.T) {
	env := apitest.New(t)
	reg := env.Store.Registry()
	const readers = 40
	var (
		start = make(chan struct{})
		wg    sync.WaitGroup
		got   [readers][]*schema.Type
		errs  [readers]error
	)
	for i := range readers {
		wg.Go(func() {
			<-start
			got[i], errs[i] = reg.List(context.Background())
		})
	}
	close(start)
	wg.Wait()
	for i := range readers {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		for j, typ := range got[i] {
			if typ != got[0][j] {
				t.Fatalf("reader %d got its own compile of %s", i, typ.Name())
			}
		}
	}
}

// An operation's cost is remembered per operation and priced variables: the
// same document asked with a small page and then a page that costs too much is
// refused the second time, whatever was remembered the first; and asked about
// another artifact it costs the same.
func TestRememberedCostFollowsThePricedVariables(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	const q = `query Fan($ref: Ref!, $first: Int, $inner: Int) { artifact(ref: $ref) { links(first: $first) { edges { node {
	  to { links(first: $inner) { edges { node { to { title content } } } } } } } } } }`
	for i, c := range []struct {
		ref          string
		first, inner int
		refused      bool
	}{
		{"hypothesis:a", 2, 2, false},
		{"hypothesis:a", 100, 100, true},
		{"hypothesis:b", 2, 2, false},
		{"hypothesis:b", 2, 100, false}, // 2 × 100 × (2 + 10): under the limit
		{"hypothesis:a", 100, 2, false},
		{"hypothesis:c", 100, 100, true},
		{"hypothesis:a", 2, 2, false},
	} {
		r := env.Post(t, tok, q, map[string]any{"ref": c.ref, "first": c.first, "inner": c.inner})
		refused := len(r.Errors) == 1 && r.Errors[0].Extensions["reason"] == "COMPLEXITY_LIMIT_EXCEEDED"
		if refused != c.refused {
			t.Errorf("%d: %s first %d inner %d: refused %v, want %v: %s", i, c.ref, c.first, c.inner, refused, c.refused, r.Raw)
		}
		if !c.refused && len(r.Errors) > 0 && r.Errors[0].Extensions["reason"] != "NOT_FOUND" {
			t.Errorf("%d: %s", i, r.Raw)
		}
	}
}
