package model

import "time"

// ProvenanceStep is one act that shaped an artifact; Actor resolves from ActorID.
type ProvenanceStep struct {
	Operation       string
	ActorID         string
	ActorKind       string
	RequestID       string
	SessionID       *string
	TaskID          *string
	DelegationChain []string
	Delegation      []*DelegationStep
	Tool            *string
	At              time.Time
	// Skill and Stamps are set on a produced_by step, the one a submission's
	// provenance stamps make.
	Skill  *string
	Stamps []*ProvenanceStamp
}

// DelegationStep is one step of a delegation chain; Actor resolves from
// ActorID.
type DelegationStep struct {
	ActorID   string
	SessionID *string
	TaskID    *string
}
