package mcp_test

import (
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/mcp"
)

// execute runs ad-hoc GraphQL through the same endpoint (its errors are
// error results with their codes, its limits those of /graphql); schema
// returns the SDL or one type's part.
func TestExecuteAndSchema(t *testing.T) {
	e := env(t, mcp.Options{Execute: true, Schema: true, Mutations: mcp.MutationsAll})
	cs := mustConnect(t, e, apitest.Contributor(t, "ada"))

	var created struct {
		CreateArtifact struct {
			Typename string `json:"__typename"`
			Ref      string
		}
	}
	res := call(t, cs, "execute", map[string]any{"query": `mutation($t: String!) { createArtifact(input: {type: "hypothesis", title: $t, content: {target_gene: "TREM2", confidence: 0.5}}) { __typename ... on WriteSuccess { ref } } }`,
		"variables": map[string]any{"t": "ad hoc"}})
	if res.IsError {
		t.Fatalf("ad-hoc mutation with mutations all: %s", text(res))
	}
	if err := jsonUnmarshal(res, &created); err != nil || created.CreateArtifact.Typename != "WriteSuccess" {
		t.Fatalf("execute: %s (%v)", text(res), err)
	}
	var got struct{ Artifact struct{ Title string } }
	if err := jsonUnmarshal(call(t, cs, "execute", map[string]any{"query": `query($r: Ref!) { artifact(ref: $r) { title } }`,
		"variables": map[string]any{"r": unpinned(created.CreateArtifact.Ref)}}), &got); err != nil || got.Artifact.Title != "ad hoc" {
		t.Fatalf("execute query: %+v %v", got, err)
	}
	// A document that does not validate: the endpoint's error, as an error result.
	if got := toolError(t, call(t, cs, "execute", map[string]any{"query": `{ artifact(ref: "hypothesis:x") { nope } }`})); got["code"] != "VALIDATION_FAILED" ||
		!strings.Contains(got["message"].(string), "nope") {
		t.Errorf("invalid document: %v", got)
	}
	// The server's depth limit applies as over HTTP.
	deep := `{ artifact(ref: "hypothesis:x") { ` + strings.Repeat("createdBy { produced { edges { node { ", 4) + "ref" + strings.Repeat(" } } } }", 4) + " } }"
	if got := toolError(t, call(t, cs, "execute", map[string]any{"query": deep})); !strings.Contains(got["message"].(string), "levels deep; the limit is") {
		t.Errorf("deep query: %v", got)
	}

	var sdl struct{ SDL string }
	data(t, cs, "schema", call(t, cs, "schema", map[string]any{"type": "CreateArtifactInput"}), &sdl)
	if !strings.Contains(sdl.SDL, "input CreateArtifactInput") || strings.Contains(sdl.SDL, "type Query") {
		t.Errorf("one type's SDL: %s", sdl.SDL)
	}
	data(t, cs, "schema", call(t, cs, "schema", map[string]any{}), &sdl)
	if !strings.Contains(sdl.SDL, "type Query") || !strings.Contains(sdl.SDL, "union UpdateArtifactResult") {
		t.Errorf("the whole SDL: %.300s", sdl.SDL)
	}
	if got := toolError(t, call(t, cs, "schema", map[string]any{"type": "Nope"})); got["code"] != "VALIDATION_FAILED" {
		t.Errorf("unknown type: %v", got)
	}
}
