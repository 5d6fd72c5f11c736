package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MintOpts describes a development token to sign with Mint.
type MintOpts struct {
	// Secret is the HS256 key, at least MinSecretBytes long (see
	// LoadOrCreateSecret).
	Secret []byte
	// Issuer and Audience default to DefaultIssuer and DefaultAudience.
	Issuer, Audience string
	// Subject is the actor id (sub); required.
	Subject string
	// Kind is the actor kind (actor_kind); it must satisfy ValidKind.
	Kind string
	// Permissions must all be known permissions; the list may be empty.
	Permissions []Permission
	// TTL is how long the token is valid; it must be positive.
	TTL time.Duration
	// SessionID, ParentSessionID and TaskID are copied into session_id,
	// parent_session_id and task_id when set.
	SessionID, ParentSessionID, TaskID string
	// DelegationChain lists the actors on whose behalf Subject acts, outermost
	// first, each with its session and task when known; every step needs an
	// actor. The token carries it in SPEC-001's shape, a list of
	// {actor_id, session_id, task_id}.
	DelegationChain DelegationChain
	// Now is the issue time; zero means time.Now().
	Now time.Time
}

// Mint signs an HS256 development token, the kind `scidex token` prints. It
// validates the options the way Verify validates a token, so a token Mint
// returns verifies with a Verifier holding the same secret, issuer and
// audience until it expires.
func Mint(opts MintOpts) (string, error) {
	if len(opts.Secret) < MinSecretBytes {
		return "", fmt.Errorf("auth: mint: secret is %d bytes, want at least %d", len(opts.Secret), MinSecretBytes)
	}
	if opts.Subject == "" {
		return "", errors.New("auth: mint: subject is required")
	}
	if opts.Subject == SystemID {
		return "", fmt.Errorf("auth: mint: subject %q is the server's own actor", SystemID)
	}
	if !ValidKind(opts.Kind) {
		return "", fmt.Errorf("auth: mint: actor kind %q is not one of human, ai_local, ai_external, ai_swarm", truncate(opts.Kind, 32))
	}
	if err := validatePermissions(opts.Permissions); err != nil {
		return "", fmt.Errorf("auth: mint: %w", err)
	}
	if opts.TTL <= 0 {
		return "", errors.New("auth: mint: TTL must be positive")
	}
	if err := opts.DelegationChain.check(); err != nil {
		return "", fmt.Errorf("auth: mint: %w", err)
	}
	var chain json.RawMessage
	if len(opts.DelegationChain) > 0 {
		chain, _ = json.Marshal(opts.DelegationChain)
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	claims := tokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    orDefault(opts.Issuer, DefaultIssuer),
			Audience:  jwt.ClaimStrings{orDefault(opts.Audience, DefaultAudience)},
			Subject:   opts.Subject,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(opts.TTL)),
		},
		ActorKind:       opts.Kind,
		Permissions:     opts.Permissions,
		SessionID:       opts.SessionID,
		ParentSessionID: opts.ParentSessionID,
		TaskID:          opts.TaskID,
		DelegationChain: chain,
	}
	signed, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(opts.Secret)
	if err != nil {
		return "", errors.New("auth: mint: signing failed")
	}
	if len(signed) > MaxTokenBytes {
		return "", fmt.Errorf("auth: mint: token is %d bytes, more than the %d Verify accepts", len(signed), MaxTokenBytes)
	}
	return signed, nil
}
