// Package auth turns the JWT a request carries into the identity the rest of
// the substrate works with.
//
// Every request to the substrate carries a JWT: in the Authorization header as
// "Bearer <token>", in the connection_init payload of a websocket, or in the
// scidex_jwt cookie (see TokenFromRequest and TokenFromInitPayload). A Verifier
// checks the token and returns a Principal: the Actor (who is acting, what kind
// of actor it is, and what it may do), the session it acts in, the task that
// session works on, and the chain of actors on whose behalf it acts. The chain
// is SPEC-001 §4.1's list of {actor_id, session_id, task_id} steps, outermost
// first; a list of bare actor ids, as tokens were minted before, is read as
// steps that carry only an actor (see ParseDelegationChain).
//
// Verification is deliberately strict. Algorithms are pinned per key type
// (HS256 for the shared development secret, RS256 for RSA keys, EdDSA for
// Ed25519 keys), so "alg":"none" and the HS256-with-a-public-key confusion
// attack are refused. The exp claim is required, iss and aud must match,
// nbf and iat are honoured within a small leeway, and the substrate's own
// claims (sub, actor_kind, permissions, delegation_chain) are checked rather
// than silently repaired. Every failure is a *VerifyError wrapping
// ErrUnauthenticated, whose Reason is short and safe to show a client; the
// underlying cause is for logs. Neither ever contains the token, the secret or
// key material.
//
// Keys come from configuration: an HS256 shared secret for development (see
// LoadOrCreateSecret and Mint, which back `scidex token`), PEM-encoded RSA or
// Ed25519 public keys, or a JWKS URL whose keys are cached by kid and
// refreshed, at a bounded rate, when a token names a kid the cache does not
// know.
package auth
