package server_test

import (
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
)

// claimHandle and renameHandle through the API, as a client sends them.
func claim(t *testing.T, env *apitest.Env, tok, name string, role ...string) result {
	t.Helper()
	vars := map[string]any{"n": name}
	if len(role) > 0 {
		vars["r"] = role[0]
	}
	var out struct{ R result }
	env.OK(t, tok, `mutation($n: String!, $r: String) { r: claimHandle(name: $n, role: $r) { `+selection(t, env, "ClaimHandleResult")+` } }`, vars, &out)
	return out.R
}

func rename(t *testing.T, env *apitest.Env, tok, from, to string) result {
	t.Helper()
	var out struct{ R result }
	env.OK(t, tok, `mutation($f: String!, $t: String!) { r: renameHandle(from: $f, to: $t) { `+selection(t, env, "RenameHandleResult")+` } }`,
		map[string]any{"f": from, "t": to}, &out)
	return out.R
}

type handleView struct {
	Name       string
	Registered bool
	State      string
	Actor      *struct{ ID, Handle string }
	Role       *string
	RenamedTo  *string
	RenamedAt  *string
	Entry      *struct{ Ref string }
}

func resolve(t *testing.T, env *apitest.Env, tok, name string) *handleView {
	t.Helper()
	var out struct{ Handle *handleView }
	env.OK(t, tok, `query($n: String!) { handle(name: $n) { name registered state actor { id handle } role renamedTo renamedAt entry { ref } } }`,
		map[string]any{"n": name}, &out)
	return out.Handle
}

func wantRefused(t *testing.T, what string, r result, typename, says string) {
	t.Helper()
	msg := r.Message
	for _, p := range r.Problems {
		msg += " " + p.Path + ": " + p.Message
	}
	if r.Typename != typename || !strings.Contains(msg, says) {
		t.Errorf("%s: %s %q, want %s saying %q", what, r.Typename, msg, typename, says)
	}
}

func TestClaimedHandleResolvesToItsActor(t *testing.T) {
	env := apitest.New(t)
	ada, bob := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob")

	r := claim(t, env, ada, "@Ada-Lovelace")
	if r.Typename != "WriteSuccess" || !strings.HasPrefix(r.Ref, "alias:ada-lovelace@") {
		t.Fatalf("claim: %s %s %+v", r.Typename, r.Message, r.Problems)
	}
	for _, name := range []string{"@ada-lovelace", "ADA-LOVELACE", "ada-lovelace"} {
		h := resolve(t, env, bob, name)
		if h == nil || h.Name != "ada-lovelace" || !h.Registered || h.State != "ACTIVE" || h.Actor == nil || h.Actor.ID != "ada" ||
			h.Actor.Handle != "ada-lovelace" || h.RenamedTo != nil || h.Entry == nil || !strings.HasPrefix(h.Entry.Ref, "alias:ada-lovelace@") {
			t.Errorf("handle(%q) = %+v", name, h)
		}
	}
	// Claiming it again is a no-op for its holder.
	if r := claim(t, env, ada, "ada-lovelace"); r.Typename != "WriteSuccess" || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "already yours") {
		t.Errorf("claim again: %s %+v", r.Typename, r.Warnings)
	}
	// An actor holds one handle; a second claim says how to change it.
	wantRefused(t, "a second handle", claim(t, env, ada, "countess"), "ValidationFailed", "rename it with renameHandle")
	// A handle nobody claimed, and no actor's id, names nothing.
	if h := resolve(t, env, bob, "@nobody"); h != nil {
		t.Errorf("handle(@nobody) = %+v, want null", h)
	}
	// An actor's id is its handle until it claims one: bob has written nothing yet, so
	// a write first makes him known.
	claim(t, env, bob, "@bob")
	if h := resolve(t, env, ada, "@bob"); h == nil || h.Actor == nil || h.Actor.ID != "bob" {
		t.Errorf("handle(@bob) = %+v", h)
	}
	// A malformed name is an error naming the field.
	resp := env.Post(t, bob, `{ handle(name: "@\u0430da") { name } }`, nil)
	if len(resp.Errors) == 0 || !strings.Contains(resp.Errors[0].Message, "U+0430") {
		t.Errorf("handle(Cyrillic) errors: %+v", resp.Errors)
	}
}

// An attacker's view of the registry: taking another's handle, or one that
// would pass for another, for the operators, or for everyone.
func TestHandlesCannotBeUsedToImpersonate(t *testing.T) {
	env := apitest.New(t)
	ada, mallory := apitest.Contributor(t, "ada"), apitest.Contributor(t, "mallory")
	admin := apitest.Token(t, "root", auth.PermAdmin, auth.PermContributor)
	if r := claim(t, env, ada, "ada1"); r.Typename != "WriteSuccess" {
		t.Fatalf("ada claims: %s %+v", r.Typename, r.Problems)
	}
	for name, c := range map[string]struct{ typename, says string }{
		"@ada1":        {"ValidationFailed", "@ada1 is taken"},
		"@ADA1":        {"ValidationFailed", "@ada1 is taken"},
		"@adal":        {"ValidationFailed", "looks like @ada1"},
		"@ada-l":       {"ValidationFailed", "looks like @ada1"},
		"@adai":        {"ValidationFailed", "looks like @ada1"},
		"@\u0430da1":   {"ValidationFailed", "U+0430"}, // Cyrillic а
		"@ada1\u200b":  {"ValidationFailed", "U+200B"},
		"@admin":       {"PermissionDenied", "reserved"},
		"@Adm1n":       {"PermissionDenied", "reserved"},
		"@scidex-team": {"PermissionDenied", "reserved"},
		"@everyone":    {"PermissionDenied", "reserved"},
		"@ada":         {"ValidationFailed", "the id of another actor"}, // ada's own id: messages to @ada reach her
		"@x":           {"ValidationFailed", "2 to 32"},
	} {
		wantRefused(t, "mallory claims "+name, claim(t, env, mallory, name), c.typename, c.says)
	}
	if h := resolve(t, env, mallory, "@ada1"); h == nil || h.Actor == nil || h.Actor.ID != "ada" {
		t.Errorf("@ada1 after the attempts: %+v", h)
	}
	// Admins may take a reserved name, and make a role alias; others may not.
	if r := claim(t, env, admin, "@admin"); r.Typename != "WriteSuccess" {
		t.Errorf("an admin claims @admin: %s %s %+v", r.Typename, r.Message, r.Problems)
	}
	mustWrite(t, env, admin, "createArtifact", "CreateArtifactInput", map[string]any{"type": "role", "id": "reviewer", "title": "Reviewers",
		"content": map[string]any{"members": []string{"ada", "bob"}}})
	wantRefused(t, "mallory makes a role alias", claim(t, env, mallory, "@reviewers", "reviewer"), "PermissionDenied", "only admins")
	if r := claim(t, env, admin, "@reviewers", "reviewer"); r.Typename != "WriteSuccess" {
		t.Errorf("an admin makes a role alias: %s %s %+v", r.Typename, r.Message, r.Problems)
	}
	if h := resolve(t, env, mallory, "@reviewers"); h == nil || h.Role == nil || *h.Role != "reviewer" || h.Actor != nil {
		t.Errorf("@reviewers: %+v", h)
	}
	// The registry's entries are written only by claimHandle and renameHandle.
	wantRefused(t, "mallory writes an entry", mutate(t, env, mallory, "createArtifact", "CreateArtifactInput", map[string]any{"type": "alias", "id": "bobby", "title": "@bobby",
		"content": map[string]any{"kind": "persona", "actor": "mallory", "state": "active", "skeleton": "bobby", "claimed_at": "2026-01-01T00:00:00Z"}}),
		"PermissionDenied", "only through claimHandle")
}
