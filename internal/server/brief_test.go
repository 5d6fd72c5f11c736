package server_test

import (
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/server"
)

// Link targets asked only for their envelope are read without their content
// (store.LinkQuery's Brief), and a target read so never answers a selection
// that reads content: not the same target asked by ref in the same request,
// not another links field over the same targets, not the same links field
// merged from a fragment that asks for a content field. Each query answers
// the content, and a page whose targets are brief still costs no more
// statements than one whose are whole.
func TestBriefLinkTargetsNeverAnswerContent(t *testing.T) {
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.ReportStatements = true }})
	tok := apitest.Contributor(t, "ada")
	hub := createH(t, env, tok, map[string]any{"title": "hub", "content": map[string]any{}})
	target := createH(t, env, tok, map[string]any{"title": "target", "content": map[string]any{"target_gene": "TREM2"}})
	mustWrite(t, env, tok, "addLink", "AddLinkInput", map[string]any{"from": unpinned(hub.Ref), "predicate": "related_to", "to": unpinned(target.Ref)})
	mustWrite(t, env, tok, "addLink", "AddLinkInput", map[string]any{"from": unpinned(target.Ref), "predicate": "related_to", "to": unpinned(hub.Ref)})
	vars := map[string]any{"hub": unpinned(hub.Ref), "target": unpinned(target.Ref)}

	statements := func(q string) float64 {
		t.Helper()
		r := env.Post(t, tok, q, vars)
		if len(r.Errors) > 0 {
			t.Fatalf("%s: %s", q, r.Raw)
		}
		n, _ := r.Extensions["sqlStatements"].(float64)
		return n
	}
	for _, c := range []struct {
		name, query string
		gene        int // how many times the answer holds the target's gene
	}{
		{"the target by ref too", `query($hub: Ref!, $target: Ref!) {
		   artifact(ref: $hub) { links(first: 5) { edges { node { to { title } } } } }
		   t: artifact(ref: $target) { content ... on Hypothesis { targetGene } } }`, 2},
		{"another links field", `query($hub: Ref!) { artifact(ref: $hub) {
		   a: links(first: 5) { edges { node { to { title } } } }
		   b: links(first: 4) { edges { node { to { content } } } } } }`, 1},
		{"the same field, merged from a fragment", `query($hub: Ref!) { artifact(ref: $hub) {
		   links(first: 5) { edges { node { to { title } } } } ...More } }
		   fragment More on Hypothesis { links(first: 5) { edges { node { to { ... on Hypothesis { targetGene } } } } } }`, 1},
		{"the brief target as the near end of its own links", `query($hub: Ref!) { artifact(ref: $hub) {
		   links(first: 5) { edges { node { to { title links(first: 5) { edges { node { from { content } } } } } } } } } }`, 1},
		{"a typed field in an inline fragment", `query($hub: Ref!) { artifact(ref: $hub) {
		   links(first: 5) { edges { node { to { title ... on Hypothesis { targetGene } } } } } } }`, 1},
	} {
		r := env.Post(t, tok, c.query, vars)
		if len(r.Errors) > 0 {
			t.Fatalf("%s: %s", c.name, r.Raw)
		}
		if got := strings.Count(string(r.Data), "TREM2"); got != c.gene {
			t.Errorf("%s: the gene appears %d times, want %d: %s", c.name, got, c.gene, r.Data)
		}
	}

	brief := statements(`query($hub: Ref!) { artifact(ref: $hub) { links(first: 5) { edges { node { to { title signals { vote { score } } } } } } } }`)
	whole := statements(`query($hub: Ref!) { artifact(ref: $hub) { links(first: 5) { edges { node { to { content signals { vote { score } } } } } } } }`)
	if brief == 0 || brief > whole {
		t.Errorf("a page of brief targets ran %v statements, of whole ones %v", brief, whole)
	}
}
