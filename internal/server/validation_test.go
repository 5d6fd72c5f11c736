package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
)

// Bad input writes nothing and answers ValidationFailed naming each problem.
func TestCreateRefusesBadInput(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	cases := []struct {
		name string
		in   map[string]any
		want []string // "path constraint" pairs that must all be reported
	}{
		{"missing required field", map[string]any{"type": "kg_edge", "title": "TREM2 binds APOE",
			"content": map[string]any{"subject": "TREM2", "object": "APOE"}}, []string{"content.predicate required"}},
		{"two missing required fields", map[string]any{"type": "gate_result", "title": "hi",
			"content": map[string]any{"gate": "sop-readiness"}}, []string{"content.target required", "content.verdict required"}},
		{"wrong JSON type", map[string]any{"type": "hypothesis", "title": "x",
			"content": map[string]any{"confidence": "high", "target_gene": 7}}, []string{"content.confidence type", "content.target_gene type"}},
		{"nested wrong type", map[string]any{"type": "paper", "id": "PMID:1", "title": "A paper",
			"content": map[string]any{"title": "A paper", "authors": []any{"Curie", 3}}}, []string{"content.authors[1] type"}},
		{"unknown type", map[string]any{"type": "hypothesys", "title": "x", "content": map[string]any{}}, []string{"type known_type"}},
		{"malformed type name", map[string]any{"type": "Hypothesis", "title": "x", "content": map[string]any{}}, []string{"type pattern"}},
		{"malformed ref in content", map[string]any{"type": "comment", "title": "a comment",
			"content": map[string]any{"target": "hypothesis with spaces", "body": "nice"}}, []string{"content.target format"}},
		{"id with colon", map[string]any{"type": "hypothesis", "id": "h:1", "title": "x", "content": map[string]any{}}, []string{"id pattern"}},
		{"id with at", map[string]any{"type": "hypothesis", "id": "h@1", "title": "x", "content": map[string]any{}}, []string{"id pattern"}},
		{"paper id not a PMID", map[string]any{"type": "paper", "id": "PMID:abc", "title": "x", "content": map[string]any{"title": "x"}}, []string{"id pattern"}},
		{"content is a string", map[string]any{"type": "hypothesis", "title": "x", "content": "TREM2"}, []string{"content type"}},
		{"content is an array", map[string]any{"type": "hypothesis", "title": "x", "content": []any{1}}, []string{"content type"}},
		{"empty title", map[string]any{"type": "hypothesis", "title": "  ", "content": map[string]any{}}, []string{"title minLength"}},
		{"title over the limit", map[string]any{"type": "hypothesis", "title": strings.Repeat("t", 501), "content": map[string]any{}}, []string{"title maxLength"}},
		{"unknown lifecycle state", map[string]any{"type": "hypothesis", "title": "x", "content": map[string]any{}, "lifecycleState": "proven"}, []string{"lifecycleState enum"}},
		{"client id missing", map[string]any{"type": "paper", "title": "x", "content": map[string]any{"title": "x"}}, []string{"id required"}},
		{"out of range", map[string]any{"type": "hypothesis", "title": "x", "content": map[string]any{"confidence": 1.5}}, []string{"content.confidence maximum"}},
	}
	before := env.Counts(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := create(t, env, tok, c.in).CreateArtifact
			if res.Typename != "ValidationFailed" || res.Code != "VALIDATION_FAILED" {
				t.Fatalf("got %s (%s), want ValidationFailed", res.Typename, res.Message)
			}
			if res.RequestID == "" {
				t.Error("no requestId")
			}
			got := map[string]bool{}
			for _, p := range res.Problems {
				got[p.Path+" "+p.Constraint] = true
				if p.Message == "" {
					t.Errorf("problem %s has no message", p.Path)
				}
			}
			for _, w := range c.want {
				if !got[w] {
					t.Errorf("missing problem %q; got %+v", w, res.Problems)
				}
			}
		})
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("refused writes changed the database: before %v after %v", before, after)
	}
}

// The value received is echoed back so a client sees what the server saw.
func TestValidationEchoesValueReceived(t *testing.T) {
	env := apitest.New(t)
	res := create(t, env, apitest.Contributor(t, "ada"), map[string]any{"type": "hypothesis", "title": "x",
		"content": map[string]any{"confidence": "high"}}).CreateArtifact
	if len(res.Problems) != 1 || string(res.Problems[0].ValueReceived) != `"high"` {
		t.Fatalf("problems %+v", res.Problems)
	}
	if !strings.Contains(res.Problems[0].Message, "number") {
		t.Errorf("message %q should say a number was expected", res.Problems[0].Message)
	}
}

// A duplicate client id is refused as a validation problem, and writes nothing.
func TestDuplicateIDRefused(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	in := map[string]any{"type": "paper", "id": "PMID:23150908", "title": "Variant of TREM2", "content": map[string]any{"title": "Variant of TREM2"}}
	if r := create(t, env, tok, in).CreateArtifact; r.Typename != "WriteSuccess" {
		t.Fatalf("first create: %+v", r)
	}
	before := env.Counts(t)
	r := create(t, env, tok, in).CreateArtifact
	if r.Typename != "ValidationFailed" || len(r.Problems) != 1 || r.Problems[0].Path != "id" || r.Problems[0].Constraint != "unique" {
		t.Fatalf("second create: %+v", r)
	}
	if !strings.Contains(r.Problems[0].Message, "paper:PMID:23150908 already exists") {
		t.Errorf("message %q", r.Problems[0].Message)
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("refused write changed the database: %v -> %v", before, after)
	}
}

// Malformed refs and filters in queries are errors naming the problem.
func TestQueryArgumentsValidated(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	cases := []struct{ query, wantCode, wantText string }{
		{`{ artifact(ref: "nope") { id } }`, "VALIDATION_FAILED", `malformed ref "nope"`},
		{`{ artifact(ref: "hypothesis:x@sha256:zz") { id } }`, "VALIDATION_FAILED", "hash must be"},
		{`{ artifacts(type: "hypothesis", filter: {content: {a: {gt: 1, between: 1}}}) { totalCount } }`, "VALIDATION_FAILED", "unknown operator"},
		{`{ artifacts(type: "hypothesis", filter: {colour: "red"}) { totalCount } }`, "VALIDATION_FAILED", "unknown field"},
		{`{ artifacts(type: "hypothesis", filter: {createdAt: {gt: "yesterday"}}) { totalCount } }`, "VALIDATION_FAILED", "RFC 3339"},
		{`{ artifacts(type: "hypothesis", after: "garbage") { totalCount } }`, "VALIDATION_FAILED", "not a cursor"},
		{`{ artifacts(type: "nosuchtype") { totalCount } }`, "VALIDATION_FAILED", "unknown artifact type"},
		{`{ artifacts(type: "hypothesis", first: 1000) { totalCount } }`, "VALIDATION_FAILED", "between 0 and 100"},
	}
	for _, c := range cases {
		r := env.Post(t, tok, c.query, nil)
		if len(r.Errors) == 0 {
			t.Errorf("%s: no error; %s", c.query, r.Raw)
			continue
		}
		e := r.Errors[0]
		if e.Code() != c.wantCode || !strings.Contains(e.Message+stringify(e.Extensions["problems"]), c.wantText) {
			t.Errorf("%s: got %s %q %v, want %s containing %q", c.query, e.Code(), e.Message, e.Extensions, c.wantCode, c.wantText)
		}
		if e.Extensions["requestId"] == "" || e.Extensions["requestId"] == nil {
			t.Errorf("%s: no requestId", c.query)
		}
	}
	// null content is refused by GraphQL itself, before the write path.
	r := env.Post(t, tok, createMutation, map[string]any{"in": map[string]any{"type": "hypothesis", "title": "x", "content": nil}})
	if len(r.Errors) != 1 || r.Errors[0].Code() != "VALIDATION_FAILED" || !strings.Contains(r.Errors[0].Message, "cannot be null") {
		t.Errorf("null content: %s", r.Raw)
	}
	// An absent artifact is null, not an error.
	var got struct{ Artifact *struct{ ID string } }
	env.OK(t, tok, `{ artifact(ref: "hypothesis:does-not-exist") { id } }`, nil, &got)
	if got.Artifact != nil {
		t.Errorf("absent artifact: %+v", got.Artifact)
	}
}

func stringify(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func equalCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
