package store

import (
	"encoding/json"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/pgjson"
	"github.com/scidex/substrate/internal/request"
)

// ProvenanceStep records one act that shaped an artifact: who, in which
// request, session and task, on whose behalf, and with which tool if any.
type ProvenanceStep struct {
	Operation string `json:"operation"`
	ActorID   string `json:"actorId"`
	ActorKind string `json:"actorKind"`
	RequestID string `json:"requestId"`
	SessionID string `json:"sessionId,omitempty"`
	TaskID    string `json:"taskId,omitempty"`
	// DelegationChain is the actor ids of Delegation; steps written before
	// Delegation existed have only these.
	DelegationChain []string `json:"delegationChain,omitempty"`
	// Delegation is the token's delegation chain step by step, in the token's
	// own shape ({actor_id, session_id, task_id}), outermost first.
	Delegation auth.DelegationChain `json:"delegation,omitempty"`
	Tool       string               `json:"tool,omitempty"`
	At         time.Time            `json:"at"`
}

// Steps returns the delegation of the step, from the actor ids alone for a
// step written before the full chain was kept.
func (s ProvenanceStep) Steps() auth.DelegationChain {
	if len(s.Delegation) > 0 || len(s.DelegationChain) == 0 {
		return s.Delegation
	}
	steps := make(auth.DelegationChain, len(s.DelegationChain))
	for i, id := range s.DelegationChain {
		steps[i] = auth.DelegationStep{ActorID: id}
	}
	return steps
}

func newStep(rc *request.Context, operation string) ProvenanceStep {
	return ProvenanceStep{
		Operation: operation, ActorID: rc.Actor.ID, ActorKind: rc.Actor.Kind, RequestID: rc.RequestID,
		SessionID: rc.SessionID, TaskID: rc.TaskID, DelegationChain: rc.DelegationChain.ActorIDs(),
		Delegation: rc.DelegationChain, At: rc.Now,
	}
}

// delegationJSON is the journal's delegation column: the request's chain in
// the token's shape, [] when there is none.
func delegationJSON(c auth.DelegationChain) pgjson.JSON {
	if len(c) == 0 {
		return pgjson.JSON("[]")
	}
	b, _ := json.Marshal(c)
	return pgjson.JSON(b)
}
