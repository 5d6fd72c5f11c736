package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/scidex/substrate/internal/apitest"
)

// specToken signs a token in the shape SPEC-001 §4.1 writes, by hand rather
// than with auth.Mint, as another issuer would.
func specToken(t *testing.T, chain any) string {
	t.Helper()
	now := time.Now()
	claims := jwt.MapClaims{
		"iss": "scidex", "aud": "scidex", "sub": "agent:reviewer", "actor_kind": "ai_local",
		"permissions": []string{"contributor"}, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"session_id": "s-reviewer", "parent_session_id": "s-orch", "task_id": "task-42.1",
		"delegation_chain": chain,
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(apitest.Secret)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// A token whose delegation_chain is the spec's list of {actor_id, session_id,
// task_id} is accepted; every write it makes stamps each step, the session and
// the task on its journal row, and the artifact's provenance shows them over
// GraphQL, with delegationChain still the actor ids.
func TestDelegatedTokenIsStampedStepByStep(t *testing.T) {
	env := apitest.New(t)
	tok := specToken(t, []any{
		map[string]any{"actor_id": "human:ada", "session_id": "s-ada"},
		map[string]any{"actor_id": "agent:orch", "session_id": "s-orch", "task_id": "task-42"},
	})
	h := createH(t, env, tok, map[string]any{"title": "TREM2 R47H", "content": map[string]any{}})
	u := update(t, env, tok, map[string]any{"ref": unpinned(h.Ref), "baseContentHash": h.ContentHash, "title": "TREM2 R47H, revised"})
	s := mutate(t, env, tok, "addSignal", "AddSignalInput", map[string]any{"ref": unpinned(h.Ref), "kind": "vote", "value": 1})
	for _, r := range []result{u, s} {
		if r.Typename != "WriteSuccess" {
			t.Fatalf("%+v", r)
		}
	}

	// The journal: one row per write (create and update each in one statement,
	// the signal through the general path), each with the whole lineage.
	rows, err := env.Pool.Query(context.Background(), `SELECT operation, session_id, parent_session_id, task_id, delegation_chain, delegation
		FROM write_journal WHERE actor_id = 'agent:reviewer' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	wantDelegation := `[{"actor_id": "human:ada", "session_id": "s-ada"}, {"task_id": "task-42", "actor_id": "agent:orch", "session_id": "s-orch"}]`
	var ops []string
	for rows.Next() {
		var op, delegation string
		var sess, parent, task *string
		var chain []string
		if err := rows.Scan(&op, &sess, &parent, &task, &chain, &delegation); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
		if str(sess) != "s-reviewer" || str(parent) != "s-orch" || str(task) != "task-42.1" {
			t.Errorf("%s: session %q parent %q task %q", op, str(sess), str(parent), str(task))
		}
		if strings.Join(chain, ",") != "human:ada,agent:orch" {
			t.Errorf("%s: delegation_chain %v", op, chain)
		}
		if !sameJSON(t, delegation, wantDelegation) {
			t.Errorf("%s: delegation %s, want %s", op, delegation, wantDelegation)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ops, ",") != "createArtifact,updateArtifact,addSignal" {
		t.Errorf("journal rows for %v", ops)
	}

	var out struct {
		Artifact struct{ Provenance []provenanceStep }
	}
	env.OK(t, tok, `query($r: Ref!) { artifact(ref: $r) { provenance { `+provenanceFields+` } } }`, map[string]any{"r": h.Ref}, &out)
	got, _ := json.Marshal(out.Artifact.Provenance)
	want := `[{"operation":"createArtifact","actor":{"id":"agent:reviewer","kind":"ai_local"},"sessionId":"s-reviewer","taskId":"task-42.1",` +
		`"delegationChain":["human:ada","agent:orch"],"delegation":[` +
		`{"actor":{"id":"human:ada"},"actorId":"human:ada","sessionId":"s-ada","taskId":null},` +
		`{"actor":{"id":"agent:orch"},"actorId":"agent:orch","sessionId":"s-orch","taskId":"task-42"}]}]`
	if string(got) != want {
		t.Errorf("provenance\n  %s\nwant\n  %s", got, want)
	}
}

// Tokens minted before carry the chain as actor ids; they still work, and each
// id becomes a step with only an actor. A token without delegation journals [].
func TestActorIDChainStillWorks(t *testing.T) {
	env := apitest.New(t)
	old := createH(t, env, specToken(t, []string{"human:ada", "agent:orch"}), map[string]any{"title": "old shape", "content": map[string]any{}})
	plain := createH(t, env, apitest.Contributor(t, "ada"), map[string]any{"title": "no delegation", "content": map[string]any{}})
	var delegation string
	if err := env.Pool.QueryRow(context.Background(), `SELECT delegation::text FROM write_journal WHERE request_id = $1`, old.RequestID).Scan(&delegation); err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, delegation, `[{"actor_id": "human:ada"}, {"actor_id": "agent:orch"}]`) {
		t.Errorf("delegation %s", delegation)
	}
	var task *string
	if err := env.Pool.QueryRow(context.Background(), `SELECT delegation::text, task_id FROM write_journal WHERE request_id = $1`, plain.RequestID).Scan(&delegation, &task); err != nil {
		t.Fatal(err)
	}
	if delegation != "[]" || task != nil {
		t.Errorf("without delegation: delegation %s task %v", delegation, task)
	}

	var out struct {
		Artifact struct{ Provenance []provenanceStep }
	}
	env.OK(t, apitest.Contributor(t, "ada"), `query($r: Ref!) { artifact(ref: $r) { provenance { `+provenanceFields+` } } }`, map[string]any{"r": old.Ref}, &out)
	if p := out.Artifact.Provenance; len(p) != 1 || len(p[0].Delegation) != 2 || p[0].Delegation[1].ActorID != "agent:orch" ||
		p[0].Delegation[1].SessionID != nil || strings.Join(p[0].DelegationChain, ",") != "human:ada,agent:orch" {
		t.Errorf("provenance %+v", p)
	}

	// Provenance written before the full chain was kept has actor ids only; it
	// reads as steps with only an actor.
	if _, err := env.Pool.Exec(context.Background(), `UPDATE artifacts SET provenance = jsonb_build_array((provenance->0) - 'delegation' - 'taskId')
		WHERE created_by = 'agent:reviewer'`); err != nil {
		t.Fatal(err)
	}
	env.OK(t, apitest.Contributor(t, "ada"), `query($r: Ref!) { artifact(ref: $r) { provenance { `+provenanceFields+` } } }`, map[string]any{"r": unpinned(old.Ref)}, &out)
	if p := out.Artifact.Provenance; len(p) != 1 || len(p[0].Delegation) != 2 || p[0].Delegation[0].ActorID != "human:ada" || p[0].TaskID != nil {
		t.Errorf("provenance of an old row %+v", p)
	}
}

// A delegation chain of any other shape is refused before anything runs, with
// the reason named.
func TestBadDelegationChainIsRefused(t *testing.T) {
	env := apitest.New(t)
	for _, chain := range []any{
		7,
		[]any{map[string]any{"session_id": "s-ada"}},
		[]any{map[string]any{"actor_id": ""}},
		[]any{"human:ada", 3},
	} {
		before := env.Counts(t)
		r := env.Post(t, specToken(t, chain), `mutation { createArtifact(input: {type: "hypothesis", title: "x", content: {}}) { __typename } }`, nil)
		if r.Status != http.StatusUnauthorized || len(r.Errors) != 1 || r.Errors[0].Code() != "UNAUTHENTICATED" ||
			r.Errors[0].Message != "unauthenticated: token delegation chain invalid" {
			t.Errorf("chain %v: %d %s", chain, r.Status, r.Raw)
		}
		if after := env.Counts(t); after["write_journal"] != before["write_journal"] || after["artifacts"] != before["artifacts"] {
			t.Errorf("chain %v: something was written: %v -> %v", chain, before, after)
		}
	}
	if !env.Log.Contains("delegation_chain[0]: actor_id is missing") {
		t.Errorf("the log does not say which step was wrong:\n%s", env.Log.String())
	}
}

// provenanceFields selects what a user reads of a provenance step.
const provenanceFields = `operation actor { id kind } sessionId taskId delegationChain delegation { actor { id } actorId sessionId taskId }`

type provenanceStep struct {
	Operation string `json:"operation"`
	Actor     struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
	} `json:"actor"`
	SessionID       *string  `json:"sessionId"`
	TaskID          *string  `json:"taskId"`
	DelegationChain []string `json:"delegationChain"`
	Delegation      []struct {
		Actor struct {
			ID string `json:"id"`
		} `json:"actor"`
		ActorID   string  `json:"actorId"`
		SessionID *string `json:"sessionId"`
		TaskID    *string `json:"taskId"`
	} `json:"delegation"`
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}
