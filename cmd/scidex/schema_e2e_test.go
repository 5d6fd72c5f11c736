package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// noteDoc is a run-time type's schema document: version 1 holds text,
// version 2 renames it to body.
func noteDoc(version int) map[string]any {
	field := "text"
	doc := map[string]any{"type": "note", "schema_version": version, "title": "Note", "description": "A short note.",
		"id_strategy": "client", "mutability": "mutable_with_history", "lock_mode": "optimistic",
		"links": map[string]any{}, "signals": map[string]any{}, "validators": []string{},
		"lifecycle": map[string]any{"initial": "open", "states": []string{"open"}, "transitions": []any{}},
		"merge":     map[string]any{"text_fields": []any{}, "append_only_arrays": []any{}}}
	if version == 2 {
		field = "body"
		doc["migrations"] = []any{map[string]any{"op": "rename", "from": "/text", "path": "/body"}}
	}
	doc["content_schema"] = map[string]any{"type": "object", "additionalProperties": false, "required": []string{field},
		"properties": map[string]any{field: map[string]any{"type": "string"}}}
	doc["examples"] = []any{map[string]any{"id": "example", "title": "e", "content": map[string]any{field: "x"}}}
	return doc
}

// `scidex schema upgrade note`, beside a running serve on its database,
// stores every note written at version 1 upgraded at version 2, a page at a
// time, and the server reads them so; an unknown type exits 1 naming it, a
// missing type name exits 2 with the usage.
func TestSchemaUpgradeCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	secret := "schema-upgrade-secret-0123456789abcdef-0123"
	db := dbtest.URL(t)
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: []string{"DATABASE_URL=" + db, "SCIDEX_JWT_SECRET=" + secret}})
	mint := func(sub string, p auth.Permission) string {
		tok, err := auth.Mint(auth.MintOpts{Secret: []byte(secret), Issuer: "scidex", Audience: "scidex", Subject: sub,
			Kind: auth.KindHuman, Permissions: []auth.Permission{p}, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	ada, rosalind := mint("ada", auth.PermContributor), mint("rosalind", auth.PermReviewer)
	write := func(tok, q string, vars map[string]any) string {
		t.Helper()
		var out map[string]struct {
			Typename    string `json:"__typename"`
			ContentHash string
			Problems    []struct{ Path, Message string }
		}
		if err := gql(ctx, srv.URL, tok, q, vars, &out); err != nil {
			t.Fatal(err)
		}
		for _, r := range out {
			if r.Typename != "WriteSuccess" {
				t.Fatalf("%s: %+v", q, r)
			}
			return r.ContentHash
		}
		return ""
	}
	const create = `mutation($in: CreateArtifactInput!) { w: createArtifact(input: $in) { __typename ... on WriteSuccess { contentHash } ... on ValidationFailed { problems { path message } } } }`
	schemaHash := write(rosalind, create, map[string]any{"in": map[string]any{"type": "schema", "id": "note", "title": "Note", "content": noteDoc(1)}})
	for _, id := range []string{"n1", "n2", "n3"} {
		write(ada, create, map[string]any{"in": map[string]any{"type": "note", "id": id, "title": id, "content": map[string]any{"text": "hello " + id}}})
	}
	write(rosalind, `mutation($in: UpdateArtifactInput!) { w: updateArtifact(input: $in) { __typename ... on WriteSuccess { contentHash } ... on ValidationFailed { problems { path message } } } }`,
		map[string]any{"in": map[string]any{"ref": "schema:note", "baseContentHash": schemaHash, "content": noteDoc(2)}})

	run := func(args ...string) (string, int) {
		cmd := e2e.CommandContext(ctx, t, append([]string{"schema"}, args...)...)
		cmd.Env = append(cmd.Env, "DATABASE_URL="+db, "SCIDEX_DATA_DIR="+e2e.DataDir(t))
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), cmd.ProcessState.ExitCode()
		}
		return string(out), 0
	}
	if out, code := run("upgrade", "--batch", "2", "note"); code != 0 || !strings.Contains(out, "note done: 3 stale, 3 upgraded to schema version 2") {
		t.Fatalf("scidex schema upgrade note: exit %d\n%s", code, out)
	}
	var read struct {
		Artifacts struct {
			Edges []struct {
				Node struct {
					Content             map[string]any
					StoredSchemaVersion int
					Revision            int
				}
			}
		}
	}
	if err := gql(ctx, srv.URL, ada, `{ artifacts(type: "note") { edges { node { content storedSchemaVersion revision } } } }`, nil, &read); err != nil {
		t.Fatal(err)
	}
	if len(read.Artifacts.Edges) != 3 {
		t.Fatalf("%d notes", len(read.Artifacts.Edges))
	}
	for _, e := range read.Artifacts.Edges {
		if n := e.Node; n.StoredSchemaVersion != 2 || n.Revision != 2 || !strings.HasPrefix(n.Content["body"].(string), "hello ") {
			t.Errorf("a note after the upgrade: %+v", n)
		}
	}
	if out, code := run("upgrade", "note"); code != 0 || !strings.Contains(out, "0 stale") {
		t.Errorf("a second run: exit %d\n%s", code, out)
	}
	if out, code := run("upgrade", "no_such_type"); code != 1 || !strings.Contains(out, `"no_such_type"`) {
		t.Errorf("an unknown type: exit %d\n%s", code, out)
	}
	if out, code := run("upgrade"); code != 2 || !strings.Contains(out, "usage: scidex schema upgrade") {
		t.Errorf("no type: exit %d\n%s", code, out)
	}
}
