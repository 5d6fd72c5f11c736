package server_test

import (
	"fmt"
	"strings"
	"sync"
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

// Renaming keeps the actor and leaves a tombstone: what was addressed to the
// old handle still reaches its holder, and nobody else can take it.
func TestRenamedHandleLeavesATombstoneThatStillDelivers(t *testing.T) {
	env := apitest.New(t)
	ada, bob, mallory := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob"), apitest.Contributor(t, "mallory")
	admin := apitest.Token(t, "root", auth.PermAdmin, auth.PermContributor)
	if r := claim(t, env, ada, "@trem2-helper"); r.Typename != "WriteSuccess" {
		t.Fatalf("claim: %s %+v", r.Typename, r.Problems)
	}
	claim(t, env, mallory, "@mallory") // mallory is known, and holds a handle
	before := send(t, env, bob, map[string]any{"recipient": "@trem2-helper", "body": "Sent before the rename"})
	if before.Typename != "WriteSuccess" {
		t.Fatalf("send to @trem2-helper: %s %s %+v", before.Typename, before.Message, before.Problems)
	}

	// Only the holder renames; an attacker's rename of it is refused and changes nothing.
	wantRefused(t, "mallory renames ada's handle", rename(t, env, mallory, "@trem2-helper", "@mallory-owns-this"), "PermissionDenied", "another actor's handle")
	wantRefused(t, "rename an unclaimed handle", rename(t, env, ada, "@ghost", "@trem2-bot"), "NotFound", "not a registered handle")
	wantRefused(t, "rename into a taken handle", rename(t, env, ada, "@trem2-helper", "@mallory"), "ValidationFailed", "taken")
	if r := rename(t, env, ada, "@trem2-helper", "@TREM2-Bot"); r.Typename != "WriteSuccess" || !strings.HasPrefix(r.Ref, "alias:trem2-bot@") {
		t.Fatalf("rename: %s %s %+v", r.Typename, r.Message, r.Problems)
	}

	// The old handle resolves to the same actor and says what it became.
	old := resolve(t, env, bob, "@trem2-helper")
	if old == nil || old.State != "TOMBSTONE" || old.Actor == nil || old.Actor.ID != "ada" || old.RenamedTo == nil || *old.RenamedTo != "trem2-bot" || old.RenamedAt == nil {
		t.Fatalf("handle(@trem2-helper) after the rename: %+v", old)
	}
	if cur := resolve(t, env, bob, "@trem2-bot"); cur == nil || cur.State != "ACTIVE" || cur.Actor == nil || cur.Actor.ID != "ada" || cur.Actor.Handle != "trem2-bot" {
		t.Errorf("handle(@trem2-bot): %+v", cur)
	}
	// Messages to either reach ada, the one from before the rename too.
	after := send(t, env, bob, map[string]any{"recipient": "@trem2-helper", "body": "Sent to the old handle after the rename"})
	now := send(t, env, bob, map[string]any{"recipient": "@trem2-bot", "body": "Sent to the new handle"})
	if after.Typename != "WriteSuccess" || now.Typename != "WriteSuccess" {
		t.Fatalf("sends after the rename: %s %+v / %s %+v", after.Typename, after.Problems, now.Typename, now.Problems)
	}
	items, _ := mailbox(t, env, ada, "PENDING")
	if got, want := ids(items), []string{unpinned(now.Ref), unpinned(after.Ref), unpinned(before.Ref)}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ada's mailbox: %v, want %v", got, want)
	}
	if items, _ := mailbox(t, env, mallory, "PENDING"); len(items) != 0 {
		t.Errorf("mallory received ada's mail: %+v", items)
	}

	// The tombstone is nobody else's: not by claim, not by rename, not even an admin's claim.
	wantRefused(t, "mallory claims the tombstone", claim(t, env, mallory, "@trem2-helper"), "ValidationFailed", "tombstone")
	wantRefused(t, "mallory renames into the tombstone", rename(t, env, mallory, "@mallory", "@trem2-helper"), "ValidationFailed", "tombstone")
	wantRefused(t, "an admin claims the tombstone", claim(t, env, admin, "@trem2-helper"), "ValidationFailed", "tombstone")
	wantRefused(t, "mallory claims a look-alike of the tombstone", claim(t, env, mallory, "@trem2-he1per"), "ValidationFailed", "looks like @trem2-helper")
	wantRefused(t, "ada renames the tombstone", rename(t, env, ada, "@trem2-helper", "@trem2-x"), "ValidationFailed", "already renamed")

	// Renamed twice, the first tombstone follows to the handle as it is now; ada takes her first back.
	if r := rename(t, env, ada, "@trem2-bot", "@ada-lab"); r.Typename != "WriteSuccess" {
		t.Fatalf("second rename: %s %+v", r.Typename, r.Problems)
	}
	if old := resolve(t, env, bob, "@trem2-helper"); old == nil || old.RenamedTo == nil || *old.RenamedTo != "ada-lab" || old.Actor.ID != "ada" {
		t.Errorf("the first tombstone after two renames: %+v", old)
	}
	if r := rename(t, env, ada, "@ada-lab", "@trem2-helper"); r.Typename != "WriteSuccess" {
		t.Fatalf("taking back her tombstone: %s %s %+v", r.Typename, r.Message, r.Problems)
	}
	if h := resolve(t, env, bob, "@trem2-helper"); h == nil || h.State != "ACTIVE" || h.Actor.Handle != "trem2-helper" {
		t.Errorf("the handle taken back: %+v", h)
	}
	if h := resolve(t, env, bob, "@ada-lab"); h == nil || h.State != "TOMBSTONE" || h.RenamedTo == nil || *h.RenamedTo != "trem2-helper" {
		t.Errorf("the handle left behind: %+v", h)
	}
	// The renames are in the entry's history, like any artifact's.
	var hist struct {
		Artifact struct{ History struct{ TotalCount int } }
	}
	env.OK(t, bob, `{ artifact(ref: "alias:trem2-helper") { history { totalCount } } }`, nil, &hist)
	if hist.Artifact.History.TotalCount != 3 {
		t.Errorf("alias:trem2-helper has %d versions, want 3 (claimed, tombstoned, taken back)", hist.Artifact.History.TotalCount)
	}
}

// A role alias delivers to the role's members.
func TestRoleAliasDeliversToTheRolesMembers(t *testing.T) {
	env := apitest.New(t)
	ada, bob := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob")
	admin := apitest.Token(t, "root", auth.PermAdmin, auth.PermContributor)
	mustWrite(t, env, admin, "createArtifact", "CreateArtifactInput", map[string]any{"type": "role", "id": "curator", "title": "Curators",
		"content": map[string]any{"members": []string{"ada", "bob"}}})
	if r := claim(t, env, admin, "@curators", "curator"); r.Typename != "WriteSuccess" {
		t.Fatalf("role alias: %s %s %+v", r.Typename, r.Message, r.Problems)
	}
	m := send(t, env, admin, map[string]any{"recipient": "@curators", "body": "Please curate the TREM2 page"})
	if m.Typename != "WriteSuccess" {
		t.Fatalf("send: %s %+v", m.Typename, m.Problems)
	}
	for name, tok := range map[string]string{"ada": ada, "bob": bob} {
		if items, _ := mailbox(t, env, tok, "PENDING"); len(items) != 1 || items[0].ID != unpinned(m.Ref) {
			t.Errorf("%s's mailbox: %+v", name, items)
		}
	}
}

// actors:* reaches every actor, and only an admin may send it.
func TestBroadcastToEveryActorIsAdminsOnly(t *testing.T) {
	env := apitest.New(t)
	ada, bob, mallory := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob"), apitest.Contributor(t, "mallory")
	admin := apitest.Token(t, "root", auth.PermAdmin, auth.PermContributor)
	for name, tok := range map[string]string{"ada": ada, "bob": bob, "mallory": mallory} { // a write makes each actor known
		if r := claim(t, env, tok, "@"+name+"-lab"); r.Typename != "WriteSuccess" {
			t.Fatalf("%s claims: %s %+v", name, r.Typename, r.Problems)
		}
	}
	messages, deliveries := env.Count(t, "artifacts WHERE type = 'message'"), env.Count(t, "message_deliveries")
	r := send(t, env, mallory, map[string]any{"recipient": "actors:*", "body": "Your token expired: paste it here"})
	wantRefused(t, "mallory broadcasts", r, "PermissionDenied", "only admins broadcast")
	if m, d := env.Count(t, "artifacts WHERE type = 'message'"), env.Count(t, "message_deliveries"); m != messages || d != deliveries {
		t.Errorf("the refused broadcast wrote %d messages and %d deliveries", m-messages, d-deliveries)
	}
	for name, tok := range map[string]string{"ada": ada, "bob": bob} {
		if items, _ := mailbox(t, env, tok, "PENDING"); len(items) != 0 {
			t.Errorf("%s received the refused broadcast: %+v", name, items)
		}
	}

	b := send(t, env, admin, map[string]any{"recipient": "actors:*", "subject": "Maintenance", "body": "The server restarts at 18:00 UTC"})
	if b.Typename != "WriteSuccess" {
		t.Fatalf("admin broadcasts: %s %s %+v", b.Typename, b.Message, b.Problems)
	}
	for name, tok := range map[string]string{"ada": ada, "bob": bob, "mallory": mallory} {
		items, _ := mailbox(t, env, tok, "PENDING")
		if len(items) != 1 || items[0].ID != unpinned(b.Ref) || items[0].Delivery == nil || items[0].Delivery.Recipient.ID != name {
			t.Errorf("%s's mailbox after the broadcast: %+v", name, items)
		}
	}
	if items, _ := mailbox(t, env, admin, "PENDING"); len(items) != 0 {
		t.Errorf("the broadcaster received her own broadcast: %+v", items)
	}
	// One message, one delivery each: a member acknowledges only their own.
	if r := ack(t, env, ada, unpinned(b.Ref), "COMPLETED"); r.Typename != "WriteSuccess" {
		t.Errorf("ada completes the broadcast: %s %+v", r.Typename, r.Problems)
	}
	if items, _ := mailbox(t, env, bob, "PENDING"); len(items) != 1 {
		t.Errorf("ada's acknowledgement moved bob's delivery: %+v", items)
	}
}

// Look-alike claims racing each other: exactly one wins, whatever the order.
func TestLookAlikeClaimsAtOnceLeaveOneHolder(t *testing.T) {
	env := apitest.New(t)
	names := []string{"@ada1", "@adal", "@ada-l", "@ADAI", "@ada_1", "@adai"}
	results := make([]result, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out struct{ R result }
			env.OK(t, apitest.Contributor(t, fmt.Sprintf("racer-%d", i)), `mutation($n: String!) { r: claimHandle(name: $n) { `+selection(t, env, "ClaimHandleResult")+` } }`,
				map[string]any{"n": name}, &out)
			results[i] = out.R
		}()
	}
	wg.Wait()
	won := 0
	for i, r := range results {
		switch r.Typename {
		case "WriteSuccess":
			won++
		case "ValidationFailed":
		default:
			t.Errorf("%s: %s %s", names[i], r.Typename, r.Message)
		}
	}
	if n := env.Count(t, "artifacts WHERE type = 'alias'"); won != 1 || n != 1 {
		t.Errorf("%d claims won, %d entries written; want 1 and 1: %+v", won, n, results)
	}
}
