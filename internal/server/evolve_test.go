package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/canon"
)

// noteSchema is a run-time type whose content schema and migrations the test
// evolves.
func noteSchema(version int, content map[string]any, migrations []any) map[string]any {
	doc := map[string]any{
		"type": "note", "schema_version": version, "title": "Note", "description": "A short note.",
		"id_strategy": "client", "mutability": "mutable_with_history", "lock_mode": "optimistic",
		"content_schema": content, "links": map[string]any{}, "signals": map[string]any{},
		"lifecycle":  map[string]any{"initial": "open", "states": []string{"open"}, "transitions": []any{}},
		"validators": []string{},
		"merge":      map[string]any{"text_fields": []any{}, "append_only_arrays": []any{}},
		"examples":   []any{map[string]any{"id": "example", "title": "e", "content": example(content)}},
	}
	if migrations != nil {
		doc["migrations"] = migrations
	}
	return doc
}

// example is a content valid against a note content schema of the test.
func example(content map[string]any) map[string]any {
	out := map[string]any{}
	for _, f := range content["required"].([]string) {
		switch f {
		case "tags":
			out[f] = []string{"x"}
		default:
			out[f] = "x"
		}
	}
	return out
}

func obj(required []string, props map[string]any) map[string]any {
	return map[string]any{"type": "object", "additionalProperties": false, "required": required, "properties": props}
}

func TestSchemaEvolutionLazy(t *testing.T) {
	env := apitest.New(t)
	reviewer := apitest.Token(t, "rosalind", auth.PermReviewer)
	writer := apitest.Token(t, "ada", auth.PermContributor)
	v1 := obj([]string{"text"}, map[string]any{"text": map[string]any{"type": "string"},
		"status": map[string]any{"type": "string", "enum": []string{"draft", "final"}}})
	mustWrite(t, env, reviewer, "createArtifact", "CreateArtifactInput", map[string]any{"type": "schema", "id": "note", "title": "Note", "content": noteSchema(1, v1, nil)})
	n := mustWrite(t, env, writer, "createArtifact", "CreateArtifactInput", map[string]any{"type": "note", "id": "n1", "title": "First",
		"content": map[string]any{"text": "hello", "status": "draft"}})

	v2 := obj([]string{"body", "tags"}, map[string]any{"body": map[string]any{"type": "string"},
		"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"status": map[string]any{"type": "string", "enum": []string{"proposed", "final"}}})
	schemaHash := func() string {
		var out struct{ A struct{ ContentHash string } }
		env.OK(t, reviewer, `{ a: artifact(ref: "schema:note") { contentHash } }`, nil, &out)
		return out.A.ContentHash
	}
	// Without migrations, v2 breaks every stored note: each break is named.
	r := update(t, env, reviewer, map[string]any{"ref": "schema:note", "baseContentHash": schemaHash(), "content": noteSchema(2, v2, nil)})
	if r.Typename != "ValidationFailed" {
		t.Fatalf("breaking v2 without migrations: %s, want ValidationFailed", r.Typename)
	}
	paths := map[string]string{}
	for _, p := range r.Problems {
		paths[p.Path] = p.Constraint + " " + p.Message
	}
	for _, f := range []string{"body", "tags", "text", "status"} {
		if !strings.HasPrefix(paths["content.content_schema.properties."+f], "breaking_change") {
			t.Errorf("no breaking_change named for %s: %+v", f, r.Problems)
		}
	}
	// A malformed op is refused naming its index and member.
	r = update(t, env, reviewer, map[string]any{"ref": "schema:note", "baseContentHash": schemaHash(),
		"content": noteSchema(2, v2, []any{map[string]any{"op": "rename", "from": "/text", "path": "/body"}, map[string]any{"op": "default", "path": "/tags"}})})
	if r.Typename != "ValidationFailed" || len(r.Problems) == 0 || !strings.Contains(r.Problems[0].Message, "migrations[1].value") {
		t.Fatalf("a default without value: %s %+v, want migrations[1].value named", r.Typename, r.Problems)
	}
	migr := []any{
		map[string]any{"op": "rename", "from": "/text", "path": "/body"},
		map[string]any{"op": "default", "path": "/tags", "value": []string{"untagged"}},
		map[string]any{"op": "map", "path": "/status", "values": map[string]string{"draft": "proposed"}},
	}
	mustWrite(t, env, reviewer, "updateArtifact", "UpdateArtifactInput", map[string]any{"ref": "schema:note", "baseContentHash": schemaHash(), "content": noteSchema(2, v2, migr)})

	type art struct {
		Content             map[string]any
		ContentHash         string
		StoredSchemaVersion int
		Title               string
		LifecycleState      *string
		Revision            int
	}
	read := func() art {
		var out struct{ A art }
		env.OK(t, writer, `{ a: artifact(ref: "note:n1") { content contentHash storedSchemaVersion title lifecycleState revision } }`, nil, &out)
		return out.A
	}
	got := read()
	if b, _ := json.Marshal(got.Content); string(b) != `{"body":"hello","status":"proposed","tags":["untagged"]}` || got.StoredSchemaVersion != 1 {
		t.Fatalf("read after v2: content %s stored at v%d, want the upgraded content stored at v1", b, got.StoredSchemaVersion)
	}
	if got.ContentHash != n.ContentHash {
		t.Fatalf("read serves contentHash %s, want the stored one %s", got.ContentHash, n.ContentHash)
	}
	// The list read serves the upgraded content too.
	var list struct {
		A struct{ Edges []struct{ Node art } }
	}
	env.OK(t, writer, `{ a: artifacts(type: "note") { edges { node { content storedSchemaVersion } } } }`, nil, &list)
	if len(list.A.Edges) != 1 || list.A.Edges[0].Node.Content["body"] != "hello" || list.A.Edges[0].Node.StoredSchemaVersion != 1 {
		t.Fatalf("list after v2: %+v", list.A.Edges)
	}

	// The next write patches the upgraded content and stores it at v2.
	mustWrite(t, env, writer, "updateArtifact", "UpdateArtifactInput", map[string]any{"ref": "note:n1", "baseContentHash": got.ContentHash,
		"patch": []any{map[string]any{"op": "add", "path": "/tags/-", "value": "greeting"}}})
	got = read()
	if b, _ := json.Marshal(got.Content); string(b) != `{"body":"hello","status":"proposed","tags":["untagged","greeting"]}` || got.StoredSchemaVersion != 2 || got.Revision != 2 {
		t.Fatalf("after update: content %s stored at v%d revision %d, want the patched upgraded content at v2", b, got.StoredSchemaVersion, got.Revision)
	}
	raw, _ := json.Marshal(got.Content)
	want, err := canon.Hash(canon.Fields{Title: got.Title, Content: raw, LifecycleState: got.LifecycleState})
	if err != nil {
		t.Fatal(err)
	}
	if got.ContentHash != want {
		t.Fatalf("contentHash %s is not of the stored content (%s)", got.ContentHash, want)
	}

	// v3 adds a required field with no default: refused, naming it and the op that would cover it.
	v3 := obj([]string{"body", "tags", "owner"}, map[string]any{"body": map[string]any{"type": "string"},
		"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"status": map[string]any{"type": "string", "enum": []string{"proposed", "final"}},
		"owner":  map[string]any{"type": "string"}})
	r = update(t, env, reviewer, map[string]any{"ref": "schema:note", "baseContentHash": schemaHash(), "content": noteSchema(3, v3, nil)})
	if r.Typename != "ValidationFailed" || len(r.Problems) != 1 || r.Problems[0].Path != "content.content_schema.properties.owner" || !strings.Contains(r.Problems[0].Message, `"owner"`) {
		t.Fatalf("breaking v3: %s %+v, want one breaking_change naming owner", r.Typename, r.Problems)
	}
}
