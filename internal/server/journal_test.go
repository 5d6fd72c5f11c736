package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
)

// Every write stamps its journal row with the actor, the session and the full
// delegation chain from the token, and the request id the client saw.
func TestEveryWriteIsJournaled(t *testing.T) {
	env := apitest.New(t)
	tok, err := auth.Mint(auth.MintOpts{Secret: apitest.Secret, Issuer: "scidex", Audience: "scidex", Subject: "agent-7",
		Kind: auth.KindAISwarm, Permissions: []auth.Permission{auth.PermContributor}, TTL: time.Hour, Now: time.Now(),
		SessionID: "sess-42", ParentSessionID: "sess-1", DelegationChain: auth.DelegationChain{{ActorID: "human:ada"}, {ActorID: "agent-orchestrator"}}})
	if err != nil {
		t.Fatal(err)
	}
	h := createH(t, env, tok, map[string]any{"title": "h", "content": map[string]any{}})
	u := update(t, env, tok, map[string]any{"ref": unpinned(h.Ref), "baseContentHash": h.ContentHash, "title": "h2"})
	l := mutate(t, env, tok, "addSignal", "AddSignalInput", map[string]any{"ref": unpinned(h.Ref), "kind": "vote", "value": 1})
	c := mutate(t, env, tok, "addComment", "AddCommentInput", map[string]any{"ref": unpinned(h.Ref), "body": "hm"})
	for _, r := range []result{u, l, c} {
		if r.Typename != "WriteSuccess" {
			t.Fatalf("%+v", r)
		}
	}
	rows, err := env.Pool.Query(context.Background(), `SELECT operation, request_id, actor_id, actor_kind, permissions, session_id, parent_session_id, delegation_chain
		FROM write_journal WHERE actor_id = 'agent-7' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		op, rid, actor, kind string
		perms                []string
		sess, parent         *string
		chain                []string
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.op, &r.rid, &r.actor, &r.kind, &r.perms, &r.sess, &r.parent, &r.chain); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	// createArtifact, updateArtifact, addSignal, and addComment's comment + its link.
	wantOps := []string{"createArtifact", "updateArtifact", "addSignal", "addComment", "addComment"}
	wantRIDs := []string{h.RequestID, u.RequestID, l.RequestID, c.RequestID, c.RequestID}
	if len(got) != len(wantOps) {
		t.Fatalf("%d journal rows, want %d: %+v", len(got), len(wantOps), got)
	}
	for i, r := range got {
		if r.op != wantOps[i] || r.rid != wantRIDs[i] || r.kind != "ai_swarm" || len(r.perms) != 1 || r.perms[0] != "contributor" ||
			r.sess == nil || *r.sess != "sess-42" || r.parent == nil || *r.parent != "sess-1" ||
			len(r.chain) != 2 || r.chain[0] != "human:ada" || r.chain[1] != "agent-orchestrator" {
			t.Errorf("journal row %d: %+v", i, r)
		}
	}
	// And each write's event is there, in the same transactions.
	if n := env.Count(t, "events WHERE actor_id = 'agent-7'"); n != 5 {
		t.Errorf("%d events, want 5 (created, updated, signal, comment created, link)", n)
	}
}
