package auth

import "time"

// The kinds of actor the substrate knows, carried in the actor_kind claim.
const (
	KindHuman      = "human"
	KindAILocal    = "ai_local"
	KindAIExternal = "ai_external"
	KindAISwarm    = "ai_swarm"
)

// KindSystem is the kind of the server's own actor; no token carries it.
const KindSystem = "system"

// SystemID is the id of the server's own actor.
const SystemID = "system"

// System is the server itself: the actor of its own writes (seeding the schema
// registry) and of its own reads (the event hub reads every event), holding
// every permission. Declared here once; a fresh value each call, so no caller
// can change another's permissions.
func System() Actor {
	return Actor{ID: SystemID, Kind: KindSystem, Permissions: []Permission{PermAdmin}}
}

// ValidKind reports whether kind is one of the four actor kinds: human,
// ai_local, ai_external or ai_swarm.
func ValidKind(kind string) bool {
	switch kind {
	case KindHuman, KindAILocal, KindAIExternal, KindAISwarm:
		return true
	}
	return false
}

// Actor is who is acting: a person or an AI agent, identified by ID (the sub
// claim), of a given Kind, holding some Permissions.
type Actor struct {
	ID          string       // the sub claim: the actor's id
	Kind        string       // the actor_kind claim: one of the Kind constants
	Permissions []Permission // the permissions claim, as granted (see Has)
}

// Has reports whether the actor holds p, directly or through a more powerful
// permission: an admin has reviewer, contributor and viewer too.
func (a Actor) Has(p Permission) bool {
	for _, held := range a.Permissions {
		if held.Includes(p) {
			return true
		}
	}
	return false
}

// Principal is a verified identity: the Actor plus the session it acts in, the
// session that started that one (if any), the task the session works on, and
// the actors on whose behalf it acts, outermost first. ExpiresAt is the
// token's exp.
type Principal struct {
	Actor
	SessionID       string          // the session_id claim; may be empty
	ParentSessionID string          // the parent_session_id claim; may be empty
	TaskID          string          // the task_id claim; may be empty
	DelegationChain DelegationChain // the delegation_chain claim, outermost first
	ExpiresAt       time.Time       // the exp claim
}
