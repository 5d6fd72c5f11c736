package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// A token may carry its delegation chain as SPEC-001 §4.1 writes it, a list
// of {actor_id, session_id, task_id}, or as the list of actor ids tokens
// carried before; both verify to the same Principal, with the task_id claim.
func TestVerifyAcceptsDelegationChainInBothShapes(t *testing.T) {
	clock := newFakeClock()
	v := hsVerifier(t, clock)
	tests := []struct {
		name  string
		chain any
		want  DelegationChain
	}{
		{"spec shape", []any{
			map[string]any{"actor_id": "human:ada", "session_id": "s-human"},
			map[string]any{"actor_id": "agent:orchestrator", "session_id": "s-orch", "task_id": "task-1"},
		}, DelegationChain{{ActorID: "human:ada", SessionID: "s-human"}, {ActorID: "agent:orchestrator", SessionID: "s-orch", TaskID: "task-1"}}},
		{"actor ids, as minted before", []string{"human:ada", "agent:orchestrator"},
			DelegationChain{{ActorID: "human:ada"}, {ActorID: "agent:orchestrator"}}},
		{"both in one list", []any{"human:ada", map[string]any{"actor_id": "agent:orchestrator", "task_id": "task-1"}},
			DelegationChain{{ActorID: "human:ada"}, {ActorID: "agent:orchestrator", TaskID: "task-1"}}},
		{"null session and task, members the spec may add", []any{
			map[string]any{"actor_id": "human:ada", "session_id": nil, "task_id": nil, "role": "pi"},
		}, DelegationChain{{ActorID: "human:ada"}}},
		{"empty list", []any{}, DelegationChain{}},
		{"null", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims := with(baseClaims(clock.Now()), "task_id", "task-2")
			claims["delegation_chain"] = tt.chain
			p, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, testSecret, claims))
			if err != nil {
				t.Fatalf("Verify: %v (cause: %v)", err, causeOf(err))
			}
			if !slices.Equal(p.DelegationChain, tt.want) {
				t.Errorf("delegation chain = %+v, want %+v", p.DelegationChain, tt.want)
			}
			if p.TaskID != "task-2" {
				t.Errorf("task id = %q, want task-2", p.TaskID)
			}
		})
	}
}

// Any other shape is refused as an invalid delegation chain, and the cause
// (for the server's log) says which step is wrong and how, without quoting
// the token.
func TestVerifyRefusesBadDelegationChain(t *testing.T) {
	clock := newFakeClock()
	v := hsVerifier(t, clock)
	tests := []struct {
		name  string
		chain any
		cause string
	}{
		{"a number", 7, "delegation_chain is a number, want a list of {actor_id, session_id, task_id} objects"},
		{"one actor id, not in a list", "human:ada", "delegation_chain is a string, want a list"},
		{"one step, not in a list", map[string]any{"actor_id": "human:ada"}, "delegation_chain is an object, want a list"},
		{"a number as a step", []any{"human:ada", 3}, "delegation_chain[1]: is a number, want an object {actor_id, session_id, task_id} or an actor id string"},
		{"a null step", []any{nil}, "delegation_chain[0]: is null"},
		{"a list as a step", []any{[]string{"human:ada"}}, "delegation_chain[0]: is a list"},
		{"a step without actor_id", []any{map[string]any{"session_id": "s1"}}, "delegation_chain[0]: actor_id is missing"},
		{"a step with an empty actor_id", []any{"human:ada", map[string]any{"actor_id": ""}}, "delegation_chain[1]: actor_id is empty"},
		{"a step with a numeric actor_id", []any{map[string]any{"actor_id": 42}}, "delegation_chain[0]: actor_id is a number, want a string"},
		{"a step with a numeric session_id", []any{map[string]any{"actor_id": "human:ada", "session_id": 1}}, "delegation_chain[0]: session_id is a number, want a string"},
		{"a step with an object task_id", []any{map[string]any{"actor_id": "human:ada", "task_id": map[string]any{}}}, "delegation_chain[0]: task_id is an object, want a string"},
		{"an empty actor id string", []string{"actor:org", ""}, "delegation_chain[1]: actor id is empty"},
		{"actor_id spelt differently", []any{map[string]any{"actorId": "human:ada"}}, "delegation_chain[0]: actor_id is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := sign(t, jwt.SigningMethodHS256, testSecret, with(baseClaims(clock.Now()), "delegation_chain", tt.chain))
			p, err := v.Verify(context.Background(), tok)
			if p != nil {
				t.Fatalf("got a principal %+v", p)
			}
			wantReason(t, err, "token delegation chain invalid", leakCandidates(tok)...)
			if got := causeOf(err); !strings.Contains(got, tt.cause) {
				t.Errorf("cause %q does not say %q", got, tt.cause)
			}
		})
	}
}

// task_id is a string like session_id; anything else is a malformed token.
func TestVerifyRefusesTaskIDNotAString(t *testing.T) {
	clock := newFakeClock()
	tok := sign(t, jwt.SigningMethodHS256, testSecret, with(baseClaims(clock.Now()), "task_id", 12))
	_, err := hsVerifier(t, clock).Verify(context.Background(), tok)
	wantReason(t, err, "token malformed", leakCandidates(tok)...)
}

// Mint writes the chain in the spec's shape, leaving out what a step does
// not know, and the task as task_id.
func TestMintWritesTheSpecShape(t *testing.T) {
	tok, err := Mint(MintOpts{Secret: testSecret, Subject: "agent:sub", Kind: KindAILocal, TTL: time.Hour,
		SessionID: "s-sub", ParentSessionID: "s-orch", TaskID: "task-1",
		DelegationChain: DelegationChain{{ActorID: "human:ada", SessionID: "s-human"}, {ActorID: "agent:orch", SessionID: "s-orch", TaskID: "task-0"}}})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		TaskID string            `json:"task_id"`
		Chain  []json.RawMessage `json:"delegation_chain"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"actor_id":"human:ada","session_id":"s-human"}`, `{"actor_id":"agent:orch","session_id":"s-orch","task_id":"task-0"}`}
	if claims.TaskID != "task-1" || len(claims.Chain) != 2 || string(claims.Chain[0]) != want[0] || string(claims.Chain[1]) != want[1] {
		t.Errorf("payload %s, want task_id task-1 and delegation_chain %v", payload, want)
	}
}

func TestDelegationChainActorIDs(t *testing.T) {
	c := DelegationChain{{ActorID: "human:ada", SessionID: "s"}, {ActorID: "agent:orch", TaskID: "t"}}
	if got := c.ActorIDs(); !slices.Equal(got, []string{"human:ada", "agent:orch"}) {
		t.Errorf("ActorIDs = %v", got)
	}
	if got := DelegationChain(nil).ActorIDs(); got == nil || len(got) != 0 {
		t.Errorf("ActorIDs of no chain = %#v, want an empty list", got)
	}
}

// causeOf returns the logged cause of a verification error.
func causeOf(err error) string {
	if ve, ok := err.(*VerifyError); ok && ve.Cause() != nil {
		return ve.Cause().Error()
	}
	return ""
}
