package server_test

import (
	"slices"
	"testing"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
)

func send(t *testing.T, env *apitest.Env, tok string, in map[string]any) result {
	t.Helper()
	return mutate(t, env, tok, "sendMessage", "SendMessageInput", in)
}

func ack(t *testing.T, env *apitest.Env, tok, ref, status string) result {
	t.Helper()
	return mutate(t, env, tok, "ackMessage", "AckMessageInput", map[string]any{"ref": ref, "status": status})
}

type mailItem struct {
	ID       string
	Title    string
	Body     string
	Delivery *struct {
		Recipient struct{ ID string }
		Status    string
		Response  *string
	}
}

// mailbox returns the ids of an actor's messages in a status, newest first.
func mailbox(t *testing.T, env *apitest.Env, tok, status string) ([]mailItem, int) {
	t.Helper()
	var out struct {
		Mailbox struct {
			TotalCount int
			Edges      []struct{ Node mailItem }
		}
	}
	env.OK(t, tok, `query($s: AckStatus!) { mailbox(status: $s, first: 50) { totalCount edges { node { id title
		... on Message { body delivery { recipient { id } status response } } } } } }`, map[string]any{"s": status}, &out)
	items := make([]mailItem, len(out.Mailbox.Edges))
	for i, e := range out.Mailbox.Edges {
		items[i] = e.Node
	}
	return items, out.Mailbox.TotalCount
}

func ids(items []mailItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func TestMessagesReachTheirRecipientsAndNobodyElse(t *testing.T) {
	env := apitest.New(t)
	ada, bob, carol := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob"), apitest.Contributor(t, "carol")
	admin := apitest.Token(t, "root", auth.PermAdmin, auth.PermContributor)

	m := send(t, env, ada, map[string]any{"recipient": "actor:bob", "subject": "TREM2 data", "body": "Can you check the **dose** table?", "priority": "high"})
	if m.Typename != "WriteSuccess" {
		t.Fatalf("send: %s %s %+v", m.Typename, m.Message, m.Problems)
	}
	msg := unpinned(m.Ref)

	items, total := mailbox(t, env, bob, "PENDING")
	if len(items) != 1 || items[0].ID != msg || total != 1 || items[0].Title != "TREM2 data" || items[0].Body != "Can you check the **dose** table?" {
		t.Fatalf("bob's mailbox: %+v total %d", items, total)
	}
	if d := items[0].Delivery; d == nil || d.Status != "PENDING" || d.Recipient.ID != "bob" {
		t.Fatalf("bob's delivery: %+v", d)
	}
	if items, _ := mailbox(t, env, ada, "PENDING"); len(items) != 0 {
		t.Errorf("the sender's mailbox holds her own message: %+v", items)
	}

	// The sender, the recipient and admins read it; for anyone else it does not exist,
	// by ref, in lists, in search, or in counts.
	read := func(tok string) bool {
		var out struct{ Artifact *struct{ ID string } }
		env.OK(t, tok, `query($r: Ref!) { artifact(ref: $r) { id } }`, map[string]any{"r": msg}, &out)
		return out.Artifact != nil
	}
	for name, c := range map[string]struct {
		tok  string
		want bool
	}{"ada": {ada, true}, "bob": {bob, true}, "admin": {admin, true}, "carol": {carol, false}} {
		if got := read(c.tok); got != c.want {
			t.Errorf("%s reads the message: %v, want %v", name, got, c.want)
		}
	}
	var list struct {
		Artifacts struct {
			TotalCount int
			Edges      []struct{ Node struct{ ID string } }
		}
		Search struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	q := `{ artifacts(type: "message") { totalCount edges { node { id } } } search(query: "dose table", types: ["message"]) { edges { node { artifact { id } } } } }`
	env.OK(t, carol, q, nil, &list)
	if list.Artifacts.TotalCount != 0 || len(list.Artifacts.Edges) != 0 || len(list.Search.Edges) != 0 {
		t.Errorf("carol sees another's mail: %+v", list)
	}
	env.OK(t, bob, q, nil, &list)
	if list.Artifacts.TotalCount != 1 || len(list.Artifacts.Edges) != 1 || len(list.Search.Edges) != 1 {
		t.Errorf("bob does not find his mail: %+v", list)
	}

	// Acknowledgement: only the recipient, only forward.
	if r := ack(t, env, carol, msg, "READ"); r.Typename != "NotFound" {
		t.Errorf("carol acks bob's mail: %s", r.Typename)
	}
	if r := ack(t, env, ada, msg, "READ"); r.Typename != "PermissionDenied" {
		t.Errorf("the sender acks her own message: %s", r.Typename)
	}
	if r := ack(t, env, bob, msg, "READ"); r.Typename != "WriteSuccess" {
		t.Fatalf("bob reads: %s %s", r.Typename, r.Message)
	}
	if items, total := mailbox(t, env, bob, "PENDING"); len(items) != 0 || total != 0 {
		t.Errorf("read mail is still pending: %+v", items)
	}
	// A message to one actor shows the acknowledgement in its content too, as a new version.
	var got struct {
		Artifact struct {
			Revision    int
			ContentHash string
			Content     map[string]any
		}
	}
	env.OK(t, ada, `query($r: Ref!) { artifact(ref: $r) { revision contentHash content } }`, map[string]any{"r": msg}, &got)
	if got.Artifact.Content["ack_status"] != "read" || got.Artifact.Content["ack_at"] == nil || got.Artifact.Revision != 2 {
		t.Errorf("the message after bob read it: %+v", got.Artifact)
	}
	// The sender may edit her words but not whom it went to or how it was answered.
	edit := func(patch []map[string]any) result {
		return update(t, env, ada, map[string]any{"ref": msg, "baseContentHash": got.Artifact.ContentHash, "patch": patch})
	}
	for _, f := range []string{"recipient", "ack_status"} {
		r := edit([]map[string]any{{"op": "replace", "path": "/" + f, "value": "actor:carol"}})
		if r.Typename != "ValidationFailed" || r.Problems[0].Path != "content."+f || r.Problems[0].Constraint != "readOnly" {
			t.Errorf("sender edits %s: %s %+v", f, r.Typename, r.Problems)
		}
	}
	if r := update(t, env, bob, map[string]any{"ref": msg, "baseContentHash": got.Artifact.ContentHash,
		"patch": []map[string]any{{"op": "replace", "path": "/body", "value": "bob was here"}}}); r.Typename != "PermissionDenied" {
		t.Errorf("the recipient edits the message: %s", r.Typename)
	}
	if r := edit([]map[string]any{{"op": "replace", "path": "/body", "value": "Can you check the **dose** table by Friday?"}}); r.Typename != "WriteSuccess" {
		t.Errorf("sender edits the body: %s %s %+v", r.Typename, r.Message, r.Problems)
	}
	if r := mutate(t, env, bob, "ackMessage", "AckMessageInput", map[string]any{"ref": msg, "status": "COMPLETED", "response": "checked: the table is right"}); r.Typename != "WriteSuccess" {
		t.Fatalf("bob completes: %s %s", r.Typename, r.Message)
	}
	items, _ = mailbox(t, env, bob, "COMPLETED")
	if len(items) != 1 || items[0].Delivery.Response == nil || *items[0].Delivery.Response != "checked: the table is right" ||
		items[0].Body != "Can you check the **dose** table by Friday?" {
		t.Fatalf("completed mail: %+v", items)
	}
	r := ack(t, env, bob, msg, "READ")
	if r.Typename != "LifecycleViolation" || r.From == nil || *r.From != "completed" || len(r.AllowedTransitions) != 0 {
		t.Errorf("completed mail went back to read: %+v", r)
	}
	if r := ack(t, env, bob, msg, "PENDING"); r.Typename != "ValidationFailed" || r.Problems[0].Path != "status" {
		t.Errorf("ack PENDING: %s %+v", r.Typename, r.Problems)
	}
	if r := ack(t, env, bob, msg, "COMPLETED"); r.Typename != "WriteSuccess" || !slices.Contains(r.Warnings, "already completed") {
		t.Errorf("repeated ack: %s %v", r.Typename, r.Warnings)
	}

	// A reply threads; replies carol cannot read are not hers to answer.
	reply := send(t, env, bob, map[string]any{"recipient": "@ada", "body": "Done, see my notes.", "inReplyTo": msg})
	if reply.Typename != "WriteSuccess" {
		t.Fatalf("reply: %s %s %+v", reply.Typename, reply.Message, reply.Problems)
	}
	var thread struct {
		Artifact struct {
			Replies struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	env.OK(t, ada, `query($r: Ref!) { artifact(ref: $r) { ... on Message { replies { edges { node { id } } } } } }`, map[string]any{"r": msg}, &thread)
	if e := thread.Artifact.Replies.Edges; len(e) != 1 || e[0].Node.ID != unpinned(reply.Ref) {
		t.Errorf("replies: %+v", e)
	}
	if r := send(t, env, carol, map[string]any{"recipient": "actor:ada", "body": "me too", "inReplyTo": msg}); r.Typename != "NotFound" {
		t.Errorf("carol replies to mail she cannot read: %s", r.Typename)
	}
	if items, _ := mailbox(t, env, ada, "PENDING"); len(items) != 1 || items[0].ID != unpinned(reply.Ref) {
		t.Errorf("ada's mailbox: %+v", items)
	}
}

func TestMessagesToRolesAndGroupsFanOut(t *testing.T) {
	env := apitest.New(t)
	ada, bob, carol, dan := apitest.Contributor(t, "ada"), apitest.Contributor(t, "bob"), apitest.Contributor(t, "carol"), apitest.Contributor(t, "dan")
	mustWrite(t, env, ada, "createArtifact", "CreateArtifactInput", map[string]any{"type": "role", "id": "reviewer", "title": "Reviewers",
		"content": map[string]any{"members": []string{"bob", "carol"}}})
	mustWrite(t, env, ada, "createArtifact", "CreateArtifactInput", map[string]any{"type": "group", "id": "microglia", "title": "Microglia WG",
		"content": map[string]any{"members": []string{"carol", "dan", "ada"}}})

	toRole := send(t, env, ada, map[string]any{"recipient": "actors:role:reviewer", "body": "Please review hypothesis:h1"})
	toGroup := send(t, env, ada, map[string]any{"recipient": "group:microglia", "body": "Meeting moved to Tuesday"})
	if toRole.Typename != "WriteSuccess" || toGroup.Typename != "WriteSuccess" {
		t.Fatalf("send: %s %s / %s %s", toRole.Typename, toRole.Message, toGroup.Typename, toGroup.Message)
	}
	role, group := unpinned(toRole.Ref), unpinned(toGroup.Ref)
	want := map[string][]string{"bob": {role}, "carol": {group, role}, "dan": {group}, "ada": {group}}
	for name, tok := range map[string]string{"ada": ada, "bob": bob, "carol": carol, "dan": dan} {
		items, total := mailbox(t, env, tok, "PENDING")
		if got := ids(items); !slices.Equal(got, want[name]) || total != len(want[name]) {
			t.Errorf("%s's mailbox: %v (total %d), want %v", name, got, total, want[name])
		}
	}
	// Each recipient acknowledges on their own.
	if r := ack(t, env, carol, role, "REJECTED"); r.Typename != "WriteSuccess" {
		t.Fatalf("carol rejects: %s %s", r.Typename, r.Message)
	}
	if items, _ := mailbox(t, env, bob, "PENDING"); !slices.Equal(ids(items), []string{role}) {
		t.Errorf("carol's ack moved bob's copy: %v", ids(items))
	}
	if items, _ := mailbox(t, env, carol, "REJECTED"); !slices.Equal(ids(items), []string{role}) {
		t.Errorf("carol's rejected mail: %v", ids(items))
	}
	// dan is not a reviewer: the role message does not exist for him.
	if r := ack(t, env, dan, role, "READ"); r.Typename != "NotFound" {
		t.Errorf("dan acks a reviewers' message: %s", r.Typename)
	}

	// Bad addresses are refused, naming the recipient, and write nothing.
	before := env.Counts(t)
	for _, to := range []string{"bob", "@nobody", "actors:role:ghost", "group:ghost", "actor:", "actor:two words"} {
		r := send(t, env, ada, map[string]any{"recipient": to, "body": "hello"})
		if r.Typename != "ValidationFailed" || r.Problems[0].Path != "recipient" {
			t.Errorf("recipient %q: %s %+v", to, r.Typename, r.Problems)
		}
	}
	if r := send(t, env, ada, map[string]any{"recipient": "actor:bob", "body": "  "}); r.Typename != "ValidationFailed" || r.Problems[0].Path != "body" {
		t.Errorf("empty body: %s %+v", r.Typename, r.Problems)
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Errorf("refused messages wrote: %v -> %v", before, after)
	}
	viewer := apitest.Token(t, "vera", auth.PermViewer)
	if r := send(t, env, viewer, map[string]any{"recipient": "actor:bob", "body": "hi"}); r.Typename != "PermissionDenied" {
		t.Errorf("a viewer sends: %s", r.Typename)
	}
}
