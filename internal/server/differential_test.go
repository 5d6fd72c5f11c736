package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/scidex/substrate/graph"
	"github.com/scidex/substrate/graph/stock"
	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/server"
)

// twoExecutors serves each operation with gqlgen's stock executor
// (graph/stock) or with the one cmd/gqlgen rewrote (graph), as the test
// asks, so both answer on one server, one database and one schema.
type twoExecutors struct {
	rewritten, stock graphql.ExecutableSchema
	useStock         atomic.Bool
}

func (e *twoExecutors) build(cfg graph.Config) graphql.ExecutableSchema {
	e.rewritten = graph.NewExecutableSchema(cfg)
	cfg.Schema = e.rewritten.Schema()
	e.stock = stock.New(cfg)
	return e
}

func (e *twoExecutors) current() graphql.ExecutableSchema {
	if e.useStock.Load() {
		return e.stock
	}
	return e.rewritten
}

func (e *twoExecutors) Schema() *ast.Schema { return e.rewritten.Schema() }

func (e *twoExecutors) Complexity(ctx context.Context, typeName, field string, childComplexity int, args map[string]any) (int, bool) {
	return e.current().Complexity(ctx, typeName, field, childComplexity, args)
}

func (e *twoExecutors) Exec(ctx context.Context) graphql.ResponseHandler {
	return e.current().Exec(ctx)
}

// answer is one response as the differential test compares it.
type answer struct {
	status int
	body   []byte
}

// ask posts one operation to the executor named; the response's own request
// id (from X-Request-Id) is replaced by a placeholder, since every request
// gets a new one.
func ask(t *testing.T, env *apitest.Env, ex *twoExecutors, useStock bool, token, query string, vars map[string]any) answer {
	t.Helper()
	ex.useStock.Store(useStock)
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, env.Server.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if rid := resp.Header.Get("X-Request-Id"); rid != "" {
		raw = bytes.ReplaceAll(raw, []byte(rid), []byte("<request id>"))
	}
	return answer{resp.StatusCode, raw}
}

// canonical is a response with its errors in a fixed order: the stock
// executor marshals list elements concurrently, so errors from sibling
// elements may be recorded in any order. Data and extensions stay the bytes
// the server wrote.
func canonical(t *testing.T, a answer) string {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(a.body, &top); err != nil {
		t.Fatalf("response is not JSON (%d): %s", a.status, a.body)
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := fmt.Sprintf("status %d\n", a.status)
	for _, k := range keys {
		v := string(top[k])
		if k == "errors" {
			var errs []json.RawMessage
			if err := json.Unmarshal(top[k], &errs); err != nil {
				t.Fatalf("errors: %v", err)
			}
			s := make([]string, len(errs))
			for i, e := range errs {
				s[i] = string(e)
			}
			sort.Strings(s)
			v = fmt.Sprint(s)
		}
		out += k + ": " + v + "\n"
	}
	return out
}

func hasErrors(t *testing.T, a answer) bool {
	t.Helper()
	var top struct{ Errors []json.RawMessage }
	if err := json.Unmarshal(a.body, &top); err != nil {
		t.Fatalf("response is not JSON (%d): %s", a.status, a.body)
	}
	return len(top.Errors) > 0 || a.status != http.StatusOK
}

// exchange is one operation of the differential test.
type exchange struct {
	name  string
	token string
	query string
	vars  map[string]any
	// fails says the operation answers with errors (on both executors).
	fails bool
	// write says the operation writes: it runs once to write, with an
	// idempotency key in its input, and the replays of both executors are
	// compared, so both see the same stored result.
	write bool
}

// The server's queries answer byte for byte the same through gqlgen's stock
// executor and through the one cmd/gqlgen rewrote for speed: the Prism page,
// lists and their pages, search in every mode, typed subtype fields and
// enums, the union result of every mutation (successes and each kind of
// problem), errors outside unions, nulls, @defer and introspection.
func TestStockAndRewrittenExecutorsAnswerTheSame(t *testing.T) {
	ex := &twoExecutors{}
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.Executor = ex.build }})
	ada, bob, carol := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob"), apitest.Contributor(t, "carol")
	rev := apitest.Token(t, "rev", auth.PermReviewer)
	viewer := apitest.Token(t, "vic", auth.PermViewer)

	// The log's end before anything is written: poll from here sees every event.
	var start struct{ Poll struct{ Cursor string } }
	env.OK(t, ada, `{ poll { cursor } }`, nil, &start)

	h := createH(t, env, ada, map[string]any{"title": "TREM2 R47H impairs microglial phagocytosis",
		"content": map[string]any{"target_gene": "TREM2", "disease": "Alzheimer's disease", "confidence": 0.6,
			"mechanism": "R47H lowers TREM2 affinity for lipid ligands", "predictions": []any{map[string]any{"statement": "less uptake"}}}})
	hRef := unpinned(h.Ref)
	h2 := update(t, env, ada, map[string]any{"ref": hRef, "baseContentHash": h.ContentHash,
		"content": map[string]any{"target_gene": "TREM2", "disease": "Alzheimer's disease", "confidence": 0.7,
			"mechanism": "R47H lowers TREM2 affinity for lipid ligands\nand slows clearance"}})
	if h2.Typename != "WriteSuccess" {
		t.Fatalf("update: %+v", h2)
	}
	paper := mustWrite(t, env, ada, "createArtifact", "CreateArtifactInput", map[string]any{"type": "paper", "id": "PMID:23150908", "title": "Variant of TREM2", "content": map[string]any{"title": "Variant of TREM2 associated with the risk of Alzheimer's disease"}})
	targets := []map[string]any{
		{"type": "hypothesis", "title": "TREM2 loss raises amyloid burden", "content": map[string]any{"target_gene": "TREM2"}, "pred": "related_to"},
		{"type": "knowledge_gap", "title": "Which ligands does TREM2 bind in vivo", "content": map[string]any{"description": "open"}, "pred": "addresses"},
		{"type": "experiment", "title": "Phagocytosis assay in iPSC microglia", "content": map[string]any{"aim": "measure uptake"}, "pred": "tested_by"},
	}
	for i, tg := range targets {
		pred := tg["pred"].(string)
		delete(tg, "pred")
		r := mustWrite(t, env, ada, "createArtifact", "CreateArtifactInput", tg)
		mustWrite(t, env, ada, "addLink", "AddLinkInput", map[string]any{"from": hRef, "predicate": pred, "to": unpinned(r.Ref)})
		for v := 0; v <= i; v++ {
			mustWrite(t, env, apitest.Contributor(t, fmt.Sprintf("voter%d", v)), "addSignal", "AddSignalInput", map[string]any{"ref": unpinned(r.Ref), "kind": "vote", "value": 1 - 2*(v%2)})
		}
	}
	mustWrite(t, env, ada, "addLink", "AddLinkInput", map[string]any{"from": hRef, "predicate": "cites", "to": unpinned(paper.Ref)})
	for _, s := range []map[string]any{
		{"kind": "vote", "value": 1}, {"kind": "rank", "dimension": "novelty", "value": 0.8}, {"kind": "fund", "value": 50}, {"kind": "calibration", "value": 0.7},
	} {
		s["ref"] = hRef
		mustWrite(t, env, bob, "addSignal", "AddSignalInput", s)
	}
	mustWrite(t, env, bob, "addComment", "AddCommentInput", map[string]any{"ref": hRef, "body": "Which ligands?"})
	msg := mutate(t, env, ada, "sendMessage", "SendMessageInput", map[string]any{"recipient": "actor:bob", "subject": "dose table", "body": "see the table"})
	if msg.Typename != "WriteSuccess" {
		t.Fatalf("send: %+v", msg)
	}
	// Fixtures of the writes compared below, one each.
	toUpdate := createH(t, env, ada, map[string]any{"title": "to update", "content": map[string]any{"target_gene": "APOE"}})
	toSupersede := createH(t, env, ada, map[string]any{"title": "to supersede", "content": map[string]any{}})
	replacement := createH(t, env, ada, map[string]any{"title": "replacement", "content": map[string]any{}})
	toLink := createH(t, env, ada, map[string]any{"title": "to link", "content": map[string]any{}})
	msgToAck := mutate(t, env, ada, "sendMessage", "SendMessageInput", map[string]any{"recipient": "actor:bob", "body": "ack me"})
	var page1 struct {
		Artifacts struct{ PageInfo struct{ EndCursor string } }
	}
	env.OK(t, ada, `{ artifacts(type: "hypothesis", first: 2) { pageInfo { endCursor } } }`, nil, &page1)

	envelope := `__typename id ref type artifactId title content contentHash revision createdAt updatedAt
		createdBy { id kind permissions handle } updatedBy { id } isLatest supersededBy lifecycleState qualityScore
		provenance { operation actor { id } requestId sessionId delegationChain tool at }`
	full := `query($ref: Ref!) { artifact(ref: $ref) { ` + envelope + `
		links(direction: BOTH, first: 10) { pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
			edges { cursor node { predicate from { ref } to { ref type } evidence createdBy { id } createdAt } } }
		signals { kinds { kind dimension aggregation value count quadraticTotal unit } vote { score up down count }
			calibration { forecaster { id } probability at brierScore } brierScore }
		history(first: 5) { totalCount edges { node { ref revision contentHash title } } }
		comments(first: 5) { totalCount edges { node { ` + envelope + ` } } }
		... on Hypothesis { targetGene confidence mechanism disease hypothesisType predictions evidenceFor noveltyScore } } }`
	write := func(name, input string) string {
		union := string(name[0]-'a'+'A') + name[1:] + "Result"
		return "mutation($in: " + input + "!) { r: " + name + "(input: $in) { " + selection(t, env, union) + " } }"
	}
	batch := `mutation($in: BatchInput!) { batch(input: $in) { committed requestId idempotentReplay results { ` + selection(t, env, "WriteResult") + ` } } }`
	introspection := `query IntrospectionQuery { __schema { queryType { name } mutationType { name } subscriptionType { name }
		types { ...FullType } directives { name description locations args { ...InputValue } } } }
	fragment FullType on __Type { kind name description
		fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
		inputFields { ...InputValue } interfaces { ...TypeRef }
		enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason } possibleTypes { ...TypeRef } }
	fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
	fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } }`

	steps := []exchange{
		// Reads.
		{name: "the Prism page", token: ada, query: PrismQuery, vars: map[string]any{"ref": hRef}},
		{name: "the rich Prism page", token: ada, query: richPrismQuery, vars: map[string]any{"ref": hRef}},
		{name: "every field of an artifact", token: ada, query: full, vars: map[string]any{"ref": hRef}},
		{name: "a pinned version", token: ada, query: full, vars: map[string]any{"ref": h.Ref}},
		{name: "a paper", token: ada, query: full, vars: map[string]any{"ref": unpinned(paper.Ref)}},
		{name: "node", token: ada, query: `query($id: ID!) { node(id: $id) { id __typename ... on Artifact { title } } }`, vars: map[string]any{"id": hRef}},
		{name: "a list", token: ada, query: `{ artifacts(type: "hypothesis", first: 2) { totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
			edges { cursor node { ref title createdBy { id } ... on Hypothesis { targetGene confidence } signals { vote { score } } } } } }`},
		{name: "a list's second page", token: ada, query: `query($after: Cursor) { artifacts(type: "hypothesis", first: 2, after: $after) { totalCount
			pageInfo { hasNextPage endCursor } edges { cursor node { ref title } } } }`, vars: map[string]any{"after": page1.Artifacts.PageInfo.EndCursor}},
		{name: "a filtered, ordered list", token: ada, query: `{ artifacts(type: "hypothesis", filter: {content: {target_gene: "TREM2"}}, orderBy: {field: TITLE, direction: ASC}) {
			totalCount edges { node { title ... on Hypothesis { targetGene } } } } }`},
		{name: "links in", token: ada, query: `query($ref: Ref!) { artifact(ref: $ref) { links(direction: IN) { edges { node { predicate from { ref title } } } } } }`, vars: map[string]any{"ref": unpinned(paper.Ref)}},
		{name: "search", token: ada, query: `{ search(query: "TREM2 microglia") { mode modeUsed fellBack notice pageInfo { hasNextPage endCursor }
			edges { cursor node { score highlight titleHighlight artifact { ref title type ... on Hypothesis { targetGene } } } } } }`},
		{name: "fuzzy search", token: ada, query: `{ search(query: "phagocytosys", mode: FUZZY) { modeUsed edges { node { score titleHighlight artifact { ref } } } } }`},
		{name: "semantic search falls back", token: ada, query: `{ search(query: "amyloid", mode: SEMANTIC) { mode modeUsed fellBack notice edges { node { artifact { ref } } } } }`},
		{name: "structured search", token: ada, query: `{ search(query: "", mode: STRUCTURED, types: ["experiment", "knowledge_gap"]) { edges { node { score artifact { ref type } } } } }`},
		{name: "a schema", token: ada, query: `{ schema(type: "hypothesis") { type version title description mutability lockMode idStrategy graphqlType contentHash document } }`},
		{name: "every schema", token: ada, query: `{ schemas { type version graphqlType contentHash } }`},
		{name: "me", token: rev, query: `{ me { id kind permissions handle } }`},
		{name: "a diff", token: ada, query: `query($from: Ref!, $to: Ref!) { diff(from: $from, to: $to) { from { ref } to { ref } patch textDiffs { path ops { op text } } } }`,
			vars: map[string]any{"from": h.Ref, "to": hRef}},
		{name: "the mailbox", token: bob, query: `{ mailbox(status: PENDING) { totalCount edges { node { ref title ... on Message { body
			delivery { recipient { id } status ackedAt response } replies(first: 5) { totalCount } } } } } }`},
		{name: "poll from the start", token: ada, query: `query($since: Cursor) { poll(since: $since, limit: 500) { cursor hasMore
			events { id cursor type occurredAt source actor { id } ref payload schemaVersion artifact { ref title } } } }`, vars: map[string]any{"since": start.Poll.Cursor}},
		{name: "introspection", token: "", query: introspection},
		{name: "a type", token: "", query: `{ __type(name: "Hypothesis") { name kind fields { name args { name defaultValue } type { kind name ofType { kind name } } } interfaces { name } } }`},

		// Nulls.
		{name: "an artifact that does not exist", token: ada, query: `{ artifact(ref: "hypothesis:nothing-here") { ref } schema(type: "nothing") { type } }`},
		{name: "a message to someone else", token: carol, query: `query($ref: Ref!) { artifact(ref: $ref) { ref } }`, vars: map[string]any{"ref": unpinned(msg.Ref)}},
		{name: "null fields of a typed subtype", token: ada, query: `query($ref: Ref!) { artifact(ref: $ref) { supersededBy qualityScore ... on Hypothesis { targetPathway evidenceAgainst impactScore } } }`,
			vars: map[string]any{"ref": unpinned(toLink.Ref)}},

		// Errors outside unions.
		{name: "a malformed ref", token: ada, query: `{ artifact(ref: "no colon") { ref } }`, fails: true},
		{name: "an unknown field", token: ada, query: `{ artifact(ref: "hypothesis:x") { nope } }`, fails: true},
		{name: "a syntax error", token: ada, query: `{ artifact(ref: `, fails: true},
		{name: "a variable of the wrong type", token: ada, query: `query($n: Int) { artifacts(type: "hypothesis", first: $n) { totalCount } }`, vars: map[string]any{"n": "many"}, fails: true},
		{name: "too costly", token: ada, query: `{ artifacts(type: "hypothesis", first: 100) { edges { node { links(first: 100) { edges { node { to { links(first: 100) { edges { node { predicate } } } } } } } } } } }`, fails: true},
		{name: "too deep", token: ada, query: `query($ref: Ref!) { artifact(ref: $ref) { links { edges { node { to { links { edges { node { to { links { edges { node { to { ref } } } } } } } } } } } } } }`,
			vars: map[string]any{"ref": hRef}, fails: true},
		{name: "no token", token: "", query: `{ me { id } }`, fails: true},
		{name: "a mutation without a token", token: "", query: write("createArtifact", "CreateArtifactInput"), vars: map[string]any{"in": map[string]any{"type": "hypothesis", "title": "x", "content": map[string]any{}}}, fails: true},
		{name: "@defer", token: ada, query: `query($ref: Ref!) { artifact(ref: $ref) { ref ... @defer(label: "later") { title links { edges { node { predicate } } } } } }`, vars: map[string]any{"ref": hRef}},

		// The problems of each mutation's union (nothing is written).
		{name: "createArtifact: ValidationFailed", token: ada, query: write("createArtifact", "CreateArtifactInput"),
			vars: map[string]any{"in": map[string]any{"type": "hypothesis", "id": "h:1", "title": "x", "content": map[string]any{"confidence": "high"}}}},
		{name: "createArtifact: PermissionDenied", token: viewer, query: write("createArtifact", "CreateArtifactInput"),
			vars: map[string]any{"in": map[string]any{"type": "hypothesis", "title": "x", "content": map[string]any{}}}},
		{name: "createArtifact: an unknown type", token: ada, query: write("createArtifact", "CreateArtifactInput"),
			vars: map[string]any{"in": map[string]any{"type": "no_such_type", "title": "x", "content": map[string]any{}}}},
		{name: "updateArtifact: VersionConflict", token: ada, query: write("updateArtifact", "UpdateArtifactInput"),
			vars: map[string]any{"in": map[string]any{"ref": hRef, "baseContentHash": h.ContentHash, "patch": []any{map[string]any{"op": "replace", "path": "/confidence", "value": 0.9}}}}},
		{name: "updateArtifact: NotFound", token: ada, query: write("updateArtifact", "UpdateArtifactInput"),
			vars: map[string]any{"in": map[string]any{"ref": "hypothesis:nothing-here", "baseContentHash": h.ContentHash, "title": "x"}}},
		{name: "updateArtifact: MutabilityViolation", token: ada, query: write("updateArtifact", "UpdateArtifactInput"),
			vars: map[string]any{"in": map[string]any{"ref": unpinned(paper.Ref), "baseContentHash": paper.ContentHash, "title": "x"}}},
		{name: "updateArtifact: LifecycleViolation", token: ada, query: write("updateArtifact", "UpdateArtifactInput"),
			vars: map[string]any{"in": map[string]any{"ref": hRef, "baseContentHash": h2.ContentHash, "lifecycleState": "supported"}}},
		{name: "updateArtifact: PermissionDenied", token: viewer, query: write("updateArtifact", "UpdateArtifactInput"),
			vars: map[string]any{"in": map[string]any{"ref": hRef, "baseContentHash": h2.ContentHash, "title": "mine now"}}},
		{name: "supersedeArtifact: NotFound", token: ada, query: write("supersedeArtifact", "SupersedeArtifactInput"),
			vars: map[string]any{"in": map[string]any{"ref": "hypothesis:nothing-here", "reason": "x"}}},
		{name: "addComment: NotFound", token: bob, query: write("addComment", "AddCommentInput"),
			vars: map[string]any{"in": map[string]any{"ref": "hypothesis:nothing-here", "body": "x"}}},
		{name: "addLink: LinkTargetMissing", token: ada, query: write("addLink", "AddLinkInput"),
			vars: map[string]any{"in": map[string]any{"from": hRef, "predicate": "supports", "to": unpinned(toLink.Ref), "evidence": []string{"paper:PMID:999"}}}},
		{name: "addLink: ValidationFailed", token: ada, query: write("addLink", "AddLinkInput"),
			vars: map[string]any{"in": map[string]any{"from": hRef, "predicate": "no_such_predicate", "to": unpinned(toLink.Ref)}}},
		{name: "addSignal: ValidationFailed", token: bob, query: write("addSignal", "AddSignalInput"),
			vars: map[string]any{"in": map[string]any{"ref": hRef, "kind": "rank", "dimension": "nonsense", "value": 7}}},
		{name: "cite: LinkTargetMissing", token: ada, query: write("cite", "CiteInput"),
			vars: map[string]any{"in": map[string]any{"ref": hRef, "pmid": "1"}}},
		{name: "cite: ValidationFailed", token: ada, query: write("cite", "CiteInput"),
			vars: map[string]any{"in": map[string]any{"ref": hRef, "pmid": "twelve"}}},
		{name: "batch: NotCommitted", token: ada, query: batch, vars: map[string]any{"in": map[string]any{"writes": []any{
			map[string]any{"alias": "a", "createArtifact": map[string]any{"type": "hypothesis", "title": "in a batch", "content": map[string]any{}}},
			map[string]any{"addLink": map[string]any{"from": "$a", "predicate": "related_to", "to": "hypothesis:nothing-here"}},
		}}}},
		{name: "sendMessage: NotFound", token: ada, query: write("sendMessage", "SendMessageInput"),
			vars: map[string]any{"in": map[string]any{"recipient": "group:nothing-here", "body": "x"}}},
		{name: "ackMessage: PermissionDenied", token: carol, query: write("ackMessage", "AckMessageInput"),
			vars: map[string]any{"in": map[string]any{"ref": unpinned(msgToAck.Ref), "status": "READ"}}},
		{name: "createArtifact of a tool call", token: ada, query: write("createArtifact", "CreateArtifactInput"),
			vars: map[string]any{"in": map[string]any{"type": "tool_call", "title": "forged", "content": map[string]any{"status": "succeeded"}}}},

		// The success of each mutation (written once, replayed by both).
		{name: "createArtifact", token: ada, write: true, query: write("createArtifact", "CreateArtifactInput"),
			vars: map[string]any{"in": map[string]any{"type": "hypothesis", "title": "created", "content": map[string]any{"target_gene": "CD33"}, "idempotencyKey": "create"}}},
		{name: "updateArtifact", token: ada, write: true, query: write("updateArtifact", "UpdateArtifactInput"),
			vars: map[string]any{"in": map[string]any{"ref": unpinned(toUpdate.Ref), "baseContentHash": toUpdate.ContentHash, "title": "updated", "idempotencyKey": "update"}}},
		{name: "supersedeArtifact", token: ada, write: true, query: write("supersedeArtifact", "SupersedeArtifactInput"),
			vars: map[string]any{"in": map[string]any{"ref": unpinned(toSupersede.Ref), "replacement": unpinned(replacement.Ref), "reason": "duplicate", "idempotencyKey": "supersede"}}},
		{name: "addComment", token: bob, write: true, query: write("addComment", "AddCommentInput"),
			vars: map[string]any{"in": map[string]any{"ref": hRef, "body": "Lipids, mostly.", "kind": "answer", "idempotencyKey": "comment"}}},
		{name: "addLink", token: ada, write: true, query: write("addLink", "AddLinkInput"),
			vars: map[string]any{"in": map[string]any{"from": hRef, "predicate": "supports", "to": unpinned(toLink.Ref), "evidence": []string{unpinned(paper.Ref)}, "idempotencyKey": "link"}}},
		{name: "addSignal", token: carol, write: true, query: write("addSignal", "AddSignalInput"),
			vars: map[string]any{"in": map[string]any{"ref": hRef, "kind": "vote", "value": -1, "reason": "weak", "idempotencyKey": "signal"}}},
		{name: "cite", token: ada, write: true, query: write("cite", "CiteInput"),
			vars: map[string]any{"in": map[string]any{"ref": unpinned(toLink.Ref), "pmid": "23150908", "span": "R47H", "claim": "risk", "idempotencyKey": "cite"}}},
		{name: "batch", token: ada, write: true, query: batch, vars: map[string]any{"in": map[string]any{"idempotencyKey": "batch", "writes": []any{
			map[string]any{"alias": "b", "createArtifact": map[string]any{"type": "hypothesis", "title": "batched", "content": map[string]any{}}},
			map[string]any{"addLink": map[string]any{"from": "$b", "predicate": "related_to", "to": hRef}},
			map[string]any{"addSignal": map[string]any{"ref": "$b", "kind": "vote", "value": 1}},
		}}}},
		{name: "sendMessage", token: ada, write: true, query: write("sendMessage", "SendMessageInput"),
			vars: map[string]any{"in": map[string]any{"recipient": "actor:carol", "subject": "hello", "body": "a word", "idempotencyKey": "send"}}},
		{name: "ackMessage", token: bob, write: true, query: write("ackMessage", "AckMessageInput"),
			vars: map[string]any{"in": map[string]any{"ref": unpinned(msgToAck.Ref), "status": "COMPLETED", "response": "done", "idempotencyKey": "ack"}}},

		// What the writes changed, read again.
		{name: "createArtifact: IdempotencyKeyReuse", token: ada, query: write("createArtifact", "CreateArtifactInput"),
			vars: map[string]any{"in": map[string]any{"type": "hypothesis", "title": "another", "content": map[string]any{}, "idempotencyKey": "create"}}},
		{name: "the page after the writes", token: ada, query: full, vars: map[string]any{"ref": hRef}},
		{name: "the events of the writes", token: ada, query: `query($since: Cursor) { poll(since: $since, limit: 500) { cursor hasMore
			events { id type ref payload actor { id } artifact { ref ... on Hypothesis { targetGene } } } } }`, vars: map[string]any{"since": start.Poll.Cursor}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.write {
				first := ask(t, env, ex, false, s.token, s.query, s.vars)
				if hasErrors(t, first) || !bytes.Contains(first.body, []byte(`"idempotentReplay":false`)) {
					t.Fatalf("the write did not happen: %s", first.body)
				}
			}
			rewritten := ask(t, env, ex, false, s.token, s.query, s.vars)
			stock := ask(t, env, ex, true, s.token, s.query, s.vars)
			if got := hasErrors(t, rewritten); got != s.fails {
				t.Errorf("errors: %v, want %v: %s", got, s.fails, rewritten.body)
			}
			if a, b := canonical(t, rewritten), canonical(t, stock); a != b {
				t.Errorf("the executors answer differently\nrewritten: %s\nstock:     %s", a, b)
			}
		})
	}
	// @defer over the websocket, where each deferred group is a payload of its own.
	deferred := `query($ref: Ref!) { artifact(ref: $ref) { ref ... @defer(label: "later") { title links { edges { node { predicate to { ref } } } } } } }`
	t.Run("@defer over the websocket", func(t *testing.T) {
		var answers [2][]string
		for i, useStock := range []bool{false, true} {
			ex.useStock.Store(useStock)
			ws := env.WS(t, ada)
			ws.Subscribe("d", deferred, map[string]any{"ref": hRef})
			for m := ws.Next("d"); m.Type != "complete"; m = ws.Next("d") {
				answers[i] = append(answers[i], m.Type+" "+string(m.Payload))
			}
		}
		if len(answers[0]) < 2 {
			t.Errorf("the deferred fields did not come in a payload of their own: %q", answers[0])
		}
		if fmt.Sprint(answers[0]) != fmt.Sprint(answers[1]) {
			t.Errorf("the executors answer differently\nrewritten: %q\nstock:     %q", answers[0], answers[1])
		}
	})
	t.Logf("%d operations compared", len(steps)+1)
}
