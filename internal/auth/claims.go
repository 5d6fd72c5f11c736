package auth

import (
	"encoding/json"
	"errors"

	"github.com/golang-jwt/jwt/v5"
)

// tokenClaims is the JSON shape of a substrate token: the registered claims
// plus the substrate's own.
type tokenClaims struct {
	jwt.RegisteredClaims
	ActorKind       string       `json:"actor_kind,omitempty"`
	Permissions     []Permission `json:"permissions,omitempty"`
	SessionID       string       `json:"session_id,omitempty"`
	ParentSessionID string       `json:"parent_session_id,omitempty"`
	TaskID          string       `json:"task_id,omitempty"`
	// DelegationChain is kept as it came and read by checkSubstrateClaims, so
	// that a chain of the wrong shape is refused with a reason that says so
	// rather than as a malformed token.
	DelegationChain json.RawMessage `json:"delegation_chain,omitempty"`
	chain           DelegationChain
}

// checkSubstrateClaims validates the claims the jwt library does not know
// about. It runs only after the signature and the registered claims passed.
func (c *tokenClaims) checkSubstrateClaims() *VerifyError {
	if c.Subject == "" {
		return verifyErr(reasonNoSubject, errors.New("sub claim is missing or empty"))
	}
	if c.Subject == SystemID {
		// The server's own actor: it owns what seeding wrote and reads every
		// event. No token speaks for it.
		return verifyErr(reasonSubject, errors.New("sub claim names the server's own actor"))
	}
	if c.ActorKind == "" {
		return verifyErr(reasonNoKind, errors.New("actor_kind claim is missing or empty"))
	}
	if !ValidKind(c.ActorKind) {
		return verifyErr(reasonKind, errors.New("actor_kind claim is not one of human, ai_local, ai_external, ai_swarm"))
	}
	if err := validatePermissions(c.Permissions); err != nil {
		return verifyErr(reasonPermission, err)
	}
	chain, err := ParseDelegationChain(c.DelegationChain)
	if err != nil {
		return verifyErr(reasonDelegation, err)
	}
	c.chain = chain
	return nil
}

// principal converts verified claims into a Principal.
func (c *tokenClaims) principal() *Principal {
	p := &Principal{
		Actor: Actor{
			ID:          c.Subject,
			Kind:        c.ActorKind,
			Permissions: c.Permissions,
		},
		SessionID:       c.SessionID,
		ParentSessionID: c.ParentSessionID,
		TaskID:          c.TaskID,
		DelegationChain: c.chain,
	}
	if c.ExpiresAt != nil {
		p.ExpiresAt = c.ExpiresAt.Time
	}
	return p
}
