package server_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
)

// Tried as a new user would: a contributor forging a tool_call ledger entry
// over GraphQL is refused with the rule named, and nothing is written.
func TestClientCannotForgeALedgerEntry(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "mallory")
	forged := map[string]any{"type": "tool_call", "title": "pk.nca", "content": map[string]any{
		"tool_name": "pk.nca", "status": "succeeded", "result": map[string]any{"cmax": 1e9}, "cost_usd": 0}}
	before := env.Counts(t)
	r := mutate(t, env, tok, "createArtifact", "CreateArtifactInput", forged)
	if r.Typename != "PermissionDenied" || r.Code != "PERMISSION_DENIED" || !strings.Contains(r.Message, "policy.create.server_only") ||
		!strings.Contains(r.Message, "invokeTool") {
		t.Errorf("forged tool_call: %s %q", r.Typename, r.Message)
	}
	if after := env.Counts(t); !maps.Equal(before, after) {
		t.Errorf("refused writes changed the tables: %v -> %v", before, after)
	}
	// One the server recorded cannot be edited by a client either, admins included.
	call := serverCreate(t, env, "ada", "invokeTool", map[string]any{"type": "tool_call", "title": "pk.nca",
		"content": map[string]any{"tool_name": "pk.nca", "status": "running"}})
	for _, who := range []string{apitest.Contributor(t, "ada"), apitest.Token(t, "root", auth.PermAdmin)} {
		r := mutate(t, env, who, "updateArtifact", "UpdateArtifactInput", map[string]any{"ref": unpinned(call.Ref),
			"baseContentHash": call.ContentHash, "patch": []any{map[string]any{"op": "replace", "path": "/status", "value": "succeeded"}}})
		if r.Typename != "PermissionDenied" || !strings.Contains(r.Message, "policy.update.server_only") {
			t.Errorf("client update of a tool_call: %s %q", r.Typename, r.Message)
		}
	}
}

// Messages are created only through sendMessage (policy.create.via).
func TestMessagesAreSentNotCreated(t *testing.T) {
	env := apitest.New(t)
	before := env.Counts(t)
	r := mutate(t, env, apitest.Contributor(t, "ada"), "createArtifact", "CreateArtifactInput", map[string]any{"type": "message",
		"title": "hi", "content": map[string]any{"recipient": "actor:bob", "body": "hello"}})
	if r.Typename != "PermissionDenied" || !strings.Contains(r.Message, "only through sendMessage") || !strings.Contains(r.Message, "policy.create.via") {
		t.Errorf("createArtifact(message): %s %q", r.Typename, r.Message)
	}
	if after := env.Counts(t); !maps.Equal(before, after) {
		t.Errorf("the refusal wrote: %v -> %v", before, after)
	}
}

// labNote is a type registered at run time whose policy keeps its artifacts to
// their participants and one field to the server.
func labNote(version int, read string) map[string]any {
	return map[string]any{"type": "schema", "id": "lab_note", "title": "Lab note", "content": map[string]any{
		"type": "lab_note", "schema_version": version, "title": "Lab note", "description": "A private lab note.",
		"id_strategy": "uuid", "mutability": "mutable_with_history", "lock_mode": "optimistic",
		"content_schema": map[string]any{"type": "object", "required": []string{"text"}, "properties": map[string]any{
			"text":       map[string]any{"type": "string", "description": "The note."},
			"signed_off": map[string]any{"type": "boolean", "description": "Signed off by the workflow."}}},
		"links":   map[string]any{"related_to": map[string]any{"targets": []string{"*"}, "evidence_required": false, "description": "Related."}},
		"signals": map[string]any{}, "lifecycle": map[string]any{"initial": nil, "states": []any{}, "transitions": []any{}},
		"validators": []any{}, "merge": map[string]any{"text_fields": []any{}, "append_only_arrays": []any{}},
		"policy": map[string]any{"read": read, "create": map[string]any{"roles": []string{"contributor"}},
			"update":        map[string]any{"roles": []string{"owner"}},
			"server_fields": []any{map[string]any{"pointer": "/signed_off", "written_by": []string{"completeWorkPacket"}}}},
		"examples": []any{map[string]any{"title": "n", "content": map[string]any{"text": "t"}}},
	}}
}

// The rules of a type registered at run time come from its document, as a
// default type's do: participants-only reads everywhere (artifact, lists,
// search, events), owner-only updates, server fields; and a new version that
// makes the type public makes its existing artifacts public with it.
func TestRuntimeTypeFollowsItsPolicy(t *testing.T) {
	env := apitest.New(t)
	reviewer := apitest.Token(t, "rosalind", auth.PermReviewer)
	ada, bob := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob")
	mustWrite(t, env, reviewer, "createArtifact", "CreateArtifactInput", labNote(1, "participants"))
	since := tail(t, env, bob)

	if r := mutate(t, env, ada, "createArtifact", "CreateArtifactInput", map[string]any{"type": "lab_note", "title": "my note",
		"content": map[string]any{"text": "spent 3 days on the western blot", "signed_off": true}}); r.Typename != "ValidationFailed" ||
		r.Problems[0].Path != "content.signed_off" || r.Problems[0].Constraint != "readOnly" {
		t.Errorf("a client setting a server field: %+v", r)
	}
	note := mustWrite(t, env, ada, "createArtifact", "CreateArtifactInput", map[string]any{"type": "lab_note", "title": "my western blot note",
		"content": map[string]any{"text": "spent 3 days on the western blot"}})
	ref := unpinned(note.Ref)

	type view struct {
		Artifact  *struct{ ID string }
		Artifacts struct{ TotalCount int }
		Search    struct {
			Edges []struct {
				Node struct{ Artifact struct{ ID string } }
			}
		}
		Poll struct{ Events []struct{ Type, Ref string } }
	}
	look := func(tok string) view {
		var v view
		env.OK(t, tok, `query($r: Ref!, $s: Cursor) { artifact(ref: $r) { id } artifacts(type: "lab_note") { totalCount }
			search(query: "western blot", types: ["lab_note"]) { edges { node { artifact { id } } } }
			poll(since: $s, types: ["lab_note.*"]) { events { type ref } } }`, map[string]any{"r": ref, "s": since}, &v)
		return v
	}
	if v := look(ada); v.Artifact == nil || v.Artifacts.TotalCount != 1 || len(v.Search.Edges) != 1 || len(v.Poll.Events) != 1 {
		t.Errorf("the creator does not see her note: %+v", v)
	}
	if v := look(bob); v.Artifact != nil || v.Artifacts.TotalCount != 0 || len(v.Search.Edges) != 0 || len(v.Poll.Events) != 0 {
		t.Errorf("bob sees ada's private note: %+v", v)
	}
	if r := mutate(t, env, bob, "updateArtifact", "UpdateArtifactInput", map[string]any{"ref": ref, "baseContentHash": note.ContentHash,
		"content": map[string]any{"text": "bob was here"}}); r.Typename != "NotFound" {
		t.Errorf("bob updates a note he cannot see: %s", r.Typename)
	}

	// Made public by a new schema version: the note is everyone's now, and only its owner still edits it.
	var cur struct{ Artifact struct{ ContentHash string } }
	env.OK(t, reviewer, `{ artifact(ref: "schema:lab_note") { contentHash } }`, nil, &cur)
	next := labNote(2, "public")
	mustWrite(t, env, reviewer, "updateArtifact", "UpdateArtifactInput", map[string]any{"ref": "schema:lab_note",
		"baseContentHash": cur.Artifact.ContentHash, "content": next["content"]})
	if v := look(bob); v.Artifact == nil || v.Artifacts.TotalCount != 1 || len(v.Search.Edges) != 1 {
		t.Errorf("bob does not see the note made public: %+v", v)
	}
	if r := mutate(t, env, bob, "updateArtifact", "UpdateArtifactInput", map[string]any{"ref": ref, "baseContentHash": note.ContentHash,
		"content": map[string]any{"text": "bob was here"}}); r.Typename != "PermissionDenied" || !strings.Contains(r.Message, "policy.update.roles") {
		t.Errorf("bob updates ada's note: %s %q", r.Typename, r.Message)
	}
}

// A schema document naming what this build lacks — a validator, an operation —
// or taking a reserved type name is refused at registration, every problem
// named, and nothing is registered.
func TestRegistrationRefusesUnknownNames(t *testing.T) {
	env := apitest.New(t)
	reviewer := apitest.Token(t, "rosalind", auth.PermReviewer)
	doc := labNote(1, "public")
	c := doc["content"].(map[string]any)
	c["validators"] = []string{"link_targets_exist", "check_spelling"}
	c["policy"].(map[string]any)["create"] = map[string]any{"via": []string{"teleport"}}
	before := env.Counts(t)
	r := mutate(t, env, reviewer, "createArtifact", "CreateArtifactInput", doc)
	got := map[string]bool{}
	for _, p := range r.Problems {
		got[p.Path+" "+p.Constraint] = true
	}
	if r.Typename != "ValidationFailed" || !got["content.validators[1] known_validator"] || !got["content.policy.create.via[0] known_operation"] {
		t.Errorf("unknown names: %s %+v", r.Typename, r.Problems)
	}

	sys := labNote(1, "public")
	sys["id"] = "system"
	sys["content"].(map[string]any)["type"] = "system"
	r = mutate(t, env, reviewer, "createArtifact", "CreateArtifactInput", sys)
	if r.Typename != "ValidationFailed" || len(r.Problems) != 1 || r.Problems[0].Path != "content.type" || r.Problems[0].Constraint != "reserved" {
		t.Errorf("a type named system: %s %+v", r.Typename, r.Problems)
	}
	if after := env.Counts(t); !maps.Equal(before, after) {
		t.Errorf("refused registrations wrote: %v -> %v", before, after)
	}
}

// Events about a participants-only artifact are theirs too: a link from a
// message is news to its sender and recipient, not to everyone.
func TestEventsAboutPrivateArtifactsArePrivate(t *testing.T) {
	env := apitest.New(t)
	ada, bob, carol := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob"), apitest.Contributor(t, "carol")
	h := createH(t, env, carol, map[string]any{"title": "public hypothesis", "content": map[string]any{}})
	since := tail(t, env, ada)
	msg := send(t, env, ada, map[string]any{"recipient": "actor:bob", "body": "have a look"})
	mustWrite(t, env, ada, "addLink", "AddLinkInput", map[string]any{"from": unpinned(msg.Ref), "predicate": "about", "to": unpinned(h.Ref)})
	events := func(tok string) string {
		var p struct {
			Poll struct{ Events []struct{ Type string } }
		}
		env.OK(t, tok, `query($s: Cursor) { poll(since: $s) { events { type } } }`, map[string]any{"s": since}, &p)
		var out []string
		for _, e := range p.Poll.Events {
			out = append(out, e.Type)
		}
		return strings.Join(out, ",")
	}
	if got := events(bob); got != "message.created,link.created" {
		t.Errorf("bob saw %q", got)
	}
	if got := events(carol); got != "" {
		t.Errorf("carol saw %q about mail that is not hers", got)
	}
}

// Another's message does not exist for you, not even as an answer to "is it
// there?": a content ref to it is refused exactly as a ref to nothing, and a
// public comment on one's own private mail is refused too.
func TestPrivateArtifactsAreNoOracle(t *testing.T) {
	env := apitest.New(t)
	ada, carol := apitest.Contributor(t, "ada"), apitest.Contributor(t, "carol")
	msg := send(t, env, ada, map[string]any{"recipient": "actor:bob", "body": "the dose table is wrong"})
	probe := func(target string) result {
		return mutate(t, env, carol, "createArtifact", "CreateArtifactInput", map[string]any{"type": "comment", "title": "probe",
			"content": map[string]any{"target": target, "body": "?"}})
	}
	real, ghost := probe(unpinned(msg.Ref)), probe("message:01900000-0000-7000-8000-000000000000")
	if real.Typename != "ValidationFailed" || real.Problems[0].Constraint != "link_targets_exist" ||
		ghost.Typename != real.Typename || len(ghost.Problems) != len(real.Problems) || ghost.Problems[0].Constraint != real.Problems[0].Constraint {
		t.Errorf("a ref to another's message answers differently from a ref to nothing:\n real  %+v\n ghost %+v", real, ghost)
	}
	r := mutate(t, env, ada, "addComment", "AddCommentInput", map[string]any{"ref": unpinned(msg.Ref), "body": "public words on private mail"})
	if r.Typename != "ValidationFailed" || r.Problems[0].Path != "ref" || r.Problems[0].Constraint != "visibility" {
		t.Errorf("a public comment on a private message: %s %+v", r.Typename, r.Problems)
	}
}
