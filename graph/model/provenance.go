package model

import "time"

// ProvenanceStep is one act that shaped an artifact; Actor resolves from ActorID.
type ProvenanceStep struct {
	Operation       string
	ActorID         string
	ActorKind       string
	RequestID       string
	SessionID       *string
	DelegationChain []string
	Tool            *string
	At              time.Time
}
