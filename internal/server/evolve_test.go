package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/canon"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// systemCtx is the context of the server's own operations (scidex schema
// upgrade runs as the system actor).
func systemCtx() context.Context {
	return request.With(context.Background(), request.System("schema-upgrade", time.Now()))
}

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

// The eager upgrade (`scidex schema upgrade`) stores every stale note at the
// current version, a page at a time: stopped after its first page it loses
// nothing, a rerun finds only what is left, and content the chain leaves
// unchanged is restamped, not rewritten. Each upgraded note's content is the
// lazy read's, its hash of what is stored, a new revision; a note already
// current is not touched.
func TestSchemaUpgradeEager(t *testing.T) {
	env := apitest.New(t)
	reviewer := apitest.Token(t, "rosalind", auth.PermReviewer)
	writer := apitest.Token(t, "ada", auth.PermContributor)
	v1 := obj([]string{"text"}, map[string]any{"text": map[string]any{"type": "string"}})
	mustWrite(t, env, reviewer, "createArtifact", "CreateArtifactInput", map[string]any{"type": "schema", "id": "note", "title": "Note", "content": noteSchema(1, v1, nil)})
	ids := []string{"n1", "n2", "n3", "n4", "n5"}
	for _, id := range ids {
		mustWrite(t, env, writer, "createArtifact", "CreateArtifactInput", map[string]any{"type": "note", "id": id, "title": id, "content": map[string]any{"text": "hello " + id}})
	}
	schemaHash := func() string {
		var out struct{ A struct{ ContentHash string } }
		env.OK(t, reviewer, `{ a: artifact(ref: "schema:note") { contentHash } }`, nil, &out)
		return out.A.ContentHash
	}
	v2 := obj([]string{"body"}, map[string]any{"body": map[string]any{"type": "string"}, "tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}})
	mustWrite(t, env, reviewer, "updateArtifact", "UpdateArtifactInput", map[string]any{"ref": "schema:note", "baseContentHash": schemaHash(),
		"content": noteSchema(2, v2, []any{map[string]any{"op": "rename", "from": "/text", "path": "/body"}})})
	// n5 is written at v2 by its owner before the upgrade: nothing to do for it.
	type art struct {
		Content             map[string]any
		ContentHash         string
		StoredSchemaVersion int
		Title               string
		LifecycleState      *string
		Revision            int
	}
	read := func(id string) art {
		var out struct{ A art }
		env.OK(t, writer, `{ a: artifact(ref: "note:`+id+`") { content contentHash storedSchemaVersion title lifecycleState revision } }`, nil, &out)
		return out.A
	}
	mustWrite(t, env, writer, "updateArtifact", "UpdateArtifactInput", map[string]any{"ref": "note:n5", "baseContentHash": read("n5").ContentHash,
		"patch": []any{map[string]any{"op": "add", "path": "/tags", "value": []string{"mine"}}}})

	ctx, cancel := context.WithCancel(systemCtx())
	rep, err := env.Store.UpgradeSchema(ctx, "note", store.UpgradeOpts{Batch: 2, Page: func(store.UpgradeReport) { cancel() }})
	if !errors.Is(err, context.Canceled) || rep.Upgraded != 2 || rep.After != "n2" {
		t.Fatalf("the run stopped after its first page: %v, %+v; want 2 upgraded after n2", err, rep)
	}
	if got := read("n3"); got.StoredSchemaVersion != 1 {
		t.Fatalf("n3 after the stopped run: stored at v%d, want v1 (not reached)", got.StoredSchemaVersion)
	}
	rep, err = env.Store.UpgradeSchema(systemCtx(), "note", store.UpgradeOpts{Batch: 2})
	if err != nil || rep.Stale != 2 || rep.Upgraded != 2 || len(rep.Failed) != 0 {
		t.Fatalf("the rerun: %v, %+v; want the 2 notes left (n3, n4), upgraded", err, rep)
	}
	for _, id := range ids[:4] {
		got := read(id)
		raw, _ := json.Marshal(got.Content)
		want, err := canon.Hash(canon.Fields{Title: got.Title, Content: raw, LifecycleState: got.LifecycleState})
		if err != nil {
			t.Fatal(err)
		}
		if string(raw) != `{"body":"hello `+id+`"}` || got.StoredSchemaVersion != 2 || got.Revision != 2 || got.ContentHash != want {
			t.Errorf("%s after the upgrade: %s at v%d revision %d hash %s (of the stored: %s)", id, raw, got.StoredSchemaVersion, got.Revision, got.ContentHash, want)
		}
	}
	if got := read("n5"); got.Revision != 2 || got.StoredSchemaVersion != 2 {
		t.Errorf("n5, current before the upgrade, was touched: revision %d at v%d", got.Revision, got.StoredSchemaVersion)
	}

	// v3 only adds an optional field: the content is what it was, so it is
	// restamped at v3 without a new revision, and a third run finds nothing.
	v3 := obj([]string{"body"}, map[string]any{"body": map[string]any{"type": "string"}, "tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"owner": map[string]any{"type": "string"}})
	mustWrite(t, env, reviewer, "updateArtifact", "UpdateArtifactInput", map[string]any{"ref": "schema:note", "baseContentHash": schemaHash(), "content": noteSchema(3, v3, nil)})
	rep, err = env.Store.UpgradeSchema(systemCtx(), "note", store.UpgradeOpts{})
	if err != nil || rep.Stale != 5 || rep.Restamped != 5 || rep.Upgraded != 0 {
		t.Fatalf("upgrade to v3: %v, %+v; want 5 restamped", err, rep)
	}
	if got := read("n1"); got.Revision != 2 || got.StoredSchemaVersion != 3 {
		t.Errorf("n1 restamped: revision %d at v%d, want revision 2 at v3", got.Revision, got.StoredSchemaVersion)
	}
	rep, err = env.Store.UpgradeSchema(systemCtx(), "note", store.UpgradeOpts{})
	if err != nil || rep.Stale != 0 {
		t.Fatalf("a third run: %v, %+v; want nothing stale", err, rep)
	}
	if _, err := env.Store.UpgradeSchema(systemCtx(), "no_such_type", store.UpgradeOpts{}); err == nil || !strings.Contains(err.Error(), `"no_such_type"`) {
		t.Fatalf("an unknown type: %v, want it named", err)
	}
}
