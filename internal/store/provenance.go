package store

import (
	"time"

	"github.com/scidex/substrate/internal/request"
)

// ProvenanceStep records one act that shaped an artifact: who, in which
// request and session, on whose behalf, and with which tool if any.
type ProvenanceStep struct {
	Operation       string    `json:"operation"`
	ActorID         string    `json:"actorId"`
	ActorKind       string    `json:"actorKind"`
	RequestID       string    `json:"requestId"`
	SessionID       string    `json:"sessionId,omitempty"`
	DelegationChain []string  `json:"delegationChain,omitempty"`
	Tool            string    `json:"tool,omitempty"`
	At              time.Time `json:"at"`
}

func newStep(rc *request.Context, operation string) ProvenanceStep {
	return ProvenanceStep{
		Operation: operation, ActorID: rc.Actor.ID, ActorKind: rc.Actor.Kind, RequestID: rc.RequestID,
		SessionID: rc.SessionID, DelegationChain: rc.DelegationChain, At: rc.Now,
	}
}
