package store_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/store"
)

func wantProblem(t *testing.T, what string, err error, code problem.Code, contains string) {
	t.Helper()
	p, ok := problem.As(err)
	if !ok || p.Code != code || !strings.Contains(p.Error(), contains) {
		t.Errorf("%s: got %v, want %s naming %q", what, err, code, contains)
	}
}

// tool_call is a ledger (policy server_only): no client operation creates,
// updates, supersedes or batches one; the server's own operations do, through
// the same write path (validation, journal, event).
func TestLedgerIsWrittenOnlyByTheServer(t *testing.T) {
	s := store.New(store.Opts{Pool: dbtest.Pool(t)})
	ctx := as("mallory")
	forged := json.RawMessage(`{"tool_name": "pk.nca", "status": "succeeded", "result": {"cmax": 1e9}, "cost_usd": 0}`)
	before := count(t, s, "SELECT count(*) FROM write_journal")

	_, err := s.CreateArtifact(ctx, store.CreateParams{Type: "tool_call", Title: "forged", Content: forged})
	wantProblem(t, "createArtifact", err, problem.PermissionDenied, "policy.create.server_only")
	res, err := s.Batch(ctx, store.BatchParams{Atomic: true, Writes: []store.BatchWrite{
		{Create: &store.CreateParams{Type: "hypothesis", Title: "cover", Content: json.RawMessage(`{}`)}},
		{Create: &store.CreateParams{Type: "tool_call", Title: "forged", Content: forged}},
	}})
	if err != nil || res.Committed || res.Items[1].Problem == nil || res.Items[1].Problem.Code != problem.PermissionDenied {
		t.Errorf("batch with a forged tool_call: %+v %v", res, err)
	}
	if n := count(t, s, "SELECT count(*) FROM write_journal"); n != before {
		t.Fatalf("refused writes left %d journal rows", n-before)
	}

	call, err := s.ServerCreate(ctx, "invokeTool", store.CreateParams{Type: "tool_call", Title: "pk.nca",
		Content: json.RawMessage(`{"tool_name": "pk.nca", "status": "running"}`)})
	if err != nil {
		t.Fatalf("the server records a call: %v", err)
	}
	ref := call.Artifact.Unpinned().String()
	_, err = s.UpdateArtifact(ctx, store.UpdateParams{Ref: ref, BaseContentHash: call.ContentHash, Content: forged})
	wantProblem(t, "updateArtifact", err, problem.PermissionDenied, "policy.update.server_only")
	// An admin, who reads every call (to a reviewer it does not exist: NOT_FOUND).
	_, err = s.SupersedeArtifact(as("root", "admin"), store.SupersedeParams{Ref: ref, Reason: "tidy"})
	wantProblem(t, "supersedeArtifact", err, problem.PermissionDenied, "policy.supersede.server_only")
	_, err = s.UpdateArtifact(as("root", "admin"), store.UpdateParams{Ref: ref, BaseContentHash: call.ContentHash, Content: forged})
	wantProblem(t, "an admin's updateArtifact", err, problem.PermissionDenied, "policy.update.server_only")

	done, err := s.ServerUpdate(ctx, "invokeTool", store.UpdateParams{Ref: ref, BaseContentHash: call.ContentHash,
		Content: json.RawMessage(`{"tool_name": "pk.nca", "status": "succeeded", "result": {"cmax": 10.5}}`)})
	if err != nil || done.Artifact.Version != 2 {
		t.Fatalf("the server finishes the call: %+v %v", done, err)
	}
	var ops []string
	rows, _ := s.Pool().Query(ctx, "SELECT operation FROM write_journal WHERE ref LIKE $1 ORDER BY id", ref+"@%")
	for rows.Next() {
		var op string
		_ = rows.Scan(&op)
		ops = append(ops, op)
	}
	if strings.Join(ops, ",") != "invokeTool,invokeTool" {
		t.Errorf("journal of the call: %v", ops)
	}
	// The server's operations still validate what they write.
	_, err = s.ServerCreate(ctx, "invokeTool", store.CreateParams{Type: "tool_call", Title: "bad", Content: json.RawMessage(`{"status": "done"}`)})
	wantProblem(t, "invalid server content", err, problem.ValidationFailed, "content.status")
	// And only server operations are server operations.
	if _, err := s.ServerCreate(ctx, "createArtifact", store.CreateParams{Type: "tool_call", Title: "x", Content: forged}); err == nil {
		t.Error("ServerCreate accepted a client operation's name")
	}
}

// Server fields (agent_work_packet.status, claimed_by…): a client may create a
// packet, open, and edit its instructions, but not claim or finish it by hand.
func TestServerFieldsAreKeptFromClients(t *testing.T) {
	s := store.New(store.Opts{Pool: dbtest.Pool(t)})
	ctx := as("ada")
	packet := func(extra string) json.RawMessage {
		return json.RawMessage(`{"instructions": "review it"` + extra + `}`)
	}
	_, err := s.CreateArtifact(ctx, store.CreateParams{Type: "agent_work_packet", Title: "p", Content: packet(`, "status": "claimed", "claimed_by": "ada"`)})
	p, ok := problem.As(err)
	if !ok || p.Code != problem.ValidationFailed || len(p.Details) != 2 || p.Details[0].Path != "content.status" ||
		p.Details[0].Constraint != "readOnly" || p.Details[1].Path != "content.claimed_by" {
		t.Fatalf("a hand-claimed packet: %v", err)
	}
	res, err := s.CreateArtifact(ctx, store.CreateParams{Type: "agent_work_packet", Title: "p", Content: packet(`, "status": "open"`)})
	if err != nil {
		t.Fatalf("an open packet: %v", err)
	}
	ref := res.Artifact.Unpinned().String()
	_, err = s.UpdateArtifact(ctx, store.UpdateParams{Ref: ref, BaseContentHash: res.ContentHash,
		Patch: json.RawMessage(`[{"op": "replace", "path": "/status", "value": "done"}]`)})
	wantProblem(t, "the owner finishing it by hand", err, problem.ValidationFailed, "content.status")
	_, err = s.UpdateArtifact(as("bob"), store.UpdateParams{Ref: ref, BaseContentHash: res.ContentHash,
		Patch: json.RawMessage(`[{"op": "replace", "path": "/instructions", "value": "do something else"}]`)})
	wantProblem(t, "another contributor editing it", err, problem.PermissionDenied, "policy.update.roles")
	if _, err := s.UpdateArtifact(ctx, store.UpdateParams{Ref: ref, BaseContentHash: res.ContentHash,
		Patch: json.RawMessage(`[{"op": "replace", "path": "/instructions", "value": "review it twice"}]`)}); err != nil {
		t.Errorf("the owner edits the instructions: %v", err)
	}
}
