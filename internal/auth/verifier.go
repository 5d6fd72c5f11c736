package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultIssuer and DefaultAudience are the iss and aud used when
// VerifierOpts or MintOpts leave them empty.
const (
	DefaultIssuer   = "scidex"
	DefaultAudience = "scidex"
)

// DefaultLeeway is the clock skew allowed on exp, nbf and iat when
// VerifierOpts.Leeway is zero.
const DefaultLeeway = 30 * time.Second

// MaxTokenBytes is the largest token Verify will parse; longer ones are refused
// before any decoding.
const MaxTokenBytes = 8 << 10

// VerifierOpts configures a Verifier. At least one key source must be set:
// HS256Secret, PublicKeysPEM or JWKSURL. Several may be set together; each
// algorithm is then checked only against the keys of its own type.
type VerifierOpts struct {
	// Issuer is the required iss claim; empty means DefaultIssuer.
	Issuer string
	// Audience must appear in the aud claim; empty means DefaultAudience.
	Audience string

	// HS256Secret enables HS256 tokens signed with this shared secret (for
	// development). It must be at least MinSecretBytes long.
	HS256Secret []byte
	// PublicKeysPEM enables RS256 (RSA keys) and EdDSA (Ed25519 keys). Each
	// entry holds one or more PEM blocks: PUBLIC KEY, RSA PUBLIC KEY or
	// CERTIFICATE. Tokens verified with these keys need no kid.
	PublicKeysPEM [][]byte
	// JWKSURL enables RS256 and EdDSA keys fetched from a JWK set. It must be
	// https, or http on a loopback host. Tokens verified this way must carry a
	// kid that is in the set; when JWKSURL is set, a token that carries a kid
	// is checked only against the JWKS.
	JWKSURL string
	// HTTPClient fetches the JWKS; nil means http.DefaultClient. Each fetch is
	// also bounded by a timeout of its own.
	HTTPClient *http.Client
	// JWKSMinRefresh is the least time between two JWKS fetches; zero means
	// DefaultJWKSMinRefresh. A token with an unknown kid causes a fetch only
	// if the last one is at least this old.
	JWKSMinRefresh time.Duration
	// JWKSMaxAge is how long a fetched JWKS is used before a refresh is tried;
	// zero means DefaultJWKSMaxAge.
	JWKSMaxAge time.Duration

	// Leeway is the clock skew allowed on exp, nbf and iat; zero means
	// DefaultLeeway. It may not be negative.
	Leeway time.Duration
	// Now returns the current time; nil means time.Now. Tests use it to move
	// the clock.
	Now func() time.Time
}

// Verifier checks tokens and turns them into Principals. It is safe for
// concurrent use.
type Verifier struct {
	secret  []byte
	static  staticKeys
	jwks    *jwksCache
	allowed map[string]bool
	parser  *jwt.Parser
}

// NewVerifier builds a Verifier from opts. It fails if no key source is
// configured, if the secret is too short, if a PEM entry holds no usable public
// key, or if the JWKS URL is not acceptable. Errors never contain key material.
func NewVerifier(opts VerifierOpts) (*Verifier, error) {
	if len(opts.HS256Secret) == 0 && len(opts.PublicKeysPEM) == 0 && opts.JWKSURL == "" {
		return nil, errors.New("auth: no key source configured (set an HS256 secret, public keys or a JWKS URL)")
	}
	if opts.Leeway < 0 {
		return nil, errors.New("auth: leeway must not be negative")
	}
	if opts.JWKSMinRefresh < 0 || opts.JWKSMaxAge < 0 {
		return nil, errors.New("auth: JWKS refresh intervals must not be negative")
	}
	v := &Verifier{allowed: make(map[string]bool)}

	if len(opts.HS256Secret) > 0 {
		if len(opts.HS256Secret) < MinSecretBytes {
			return nil, fmt.Errorf("auth: HS256 secret is %d bytes, want at least %d", len(opts.HS256Secret), MinSecretBytes)
		}
		v.secret = append([]byte(nil), opts.HS256Secret...)
		v.allowed[algHS256] = true
	}

	static, err := parsePublicKeysPEM(opts.PublicKeysPEM)
	if err != nil {
		return nil, err
	}
	v.static = static
	if len(static.rsa) > 0 {
		v.allowed[algRS256] = true
	}
	if len(static.ed) > 0 {
		v.allowed[algEdDSA] = true
	}

	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if opts.JWKSURL != "" {
		if err := checkJWKSURL(opts.JWKSURL); err != nil {
			return nil, err
		}
		client := opts.HTTPClient
		if client == nil {
			client = http.DefaultClient
		}
		v.jwks = &jwksCache{
			url:        opts.JWKSURL,
			client:     client,
			now:        now,
			minRefresh: orDefault(opts.JWKSMinRefresh, DefaultJWKSMinRefresh),
			maxAge:     orDefault(opts.JWKSMaxAge, DefaultJWKSMaxAge),
		}
		v.allowed[algRS256] = true
		v.allowed[algEdDSA] = true
	}

	methods := make([]string, 0, len(v.allowed))
	for _, alg := range []string{algHS256, algRS256, algEdDSA} {
		if v.allowed[alg] {
			methods = append(methods, alg)
		}
	}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(methods),
		jwt.WithExpirationRequired(),
		jwt.WithIssuer(orDefault(opts.Issuer, DefaultIssuer)),
		jwt.WithAudience(orDefault(opts.Audience, DefaultAudience)),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(orDefault(opts.Leeway, DefaultLeeway)),
		jwt.WithTimeFunc(now),
	)
	return v, nil
}

// Verify checks token and returns the Principal it proves. token is the bare
// JWT, without any "Bearer " prefix. ctx bounds the wait for a JWKS refresh.
// Every error is a *VerifyError wrapping ErrUnauthenticated.
func (v *Verifier) Verify(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, verifyErr(reasonMissing, nil)
	}
	if len(token) > MaxTokenBytes {
		return nil, verifyErr(reasonTooLarge, fmt.Errorf("token is %d bytes, limit %d", len(token), MaxTokenBytes))
	}
	claims := &tokenClaims{}
	tok, err := v.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		return v.keyFor(ctx, t)
	})
	if err != nil {
		return nil, v.classify(err, tok, claims)
	}
	if verr := claims.checkSubstrateClaims(); verr != nil {
		return nil, verr
	}
	return claims.principal(), nil
}

// keyFor picks the key for a parsed but unverified token. The parser has
// already checked that the token's alg is one this verifier accepts; keyFor
// still returns only a key whose type matches that alg.
func (v *Verifier) keyFor(ctx context.Context, t *jwt.Token) (any, error) {
	if _, ok := t.Header["crit"]; ok {
		return nil, verifyErr(reasonCritical, errors.New("token header has a crit member"))
	}
	alg := t.Method.Alg()
	if !v.allowed[alg] {
		return nil, verifyErr(reasonAlgRefused, nil)
	}
	if alg == algHS256 {
		return v.secret, nil
	}
	kidValue, hasKid := t.Header["kid"]
	if hasKid && v.jwks != nil {
		kid, ok := kidValue.(string)
		if !ok || kid == "" || len(kid) > 256 {
			return nil, verifyErr(reasonBadKeyID, errors.New("kid header is not a short non-empty string"))
		}
		return v.jwks.lookup(ctx, kid, alg)
	}
	var keys []jwt.VerificationKey
	switch alg {
	case algRS256:
		for _, k := range v.static.rsa {
			keys = append(keys, k)
		}
	case algEdDSA:
		for _, k := range v.static.ed {
			keys = append(keys, k)
		}
	}
	switch {
	case len(keys) == 1:
		return keys[0], nil
	case len(keys) > 1:
		return jwt.VerificationKeySet{Keys: keys}, nil
	case v.jwks != nil:
		return nil, verifyErr(reasonNoKeyID, errors.New("token has no kid header and no PEM key verifies its alg"))
	default:
		return nil, verifyErr(reasonAlgRefused, nil)
	}
}

// classify turns a jwt parse error into a *VerifyError with a safe reason.
// tok and claims are what the parser filled in before failing.
func (v *Verifier) classify(err error, tok *jwt.Token, claims *tokenClaims) *VerifyError {
	var ve *VerifyError
	switch {
	case errors.As(err, &ve):
		// keyFor refused the token; its reason and cause stand.
		return ve
	case errors.Is(err, jwt.ErrTokenMalformed):
		return verifyErr(reasonMalformed, err)
	case tok != nil && tok.Method == nil:
		// The header parsed but names no algorithm we know of.
		return verifyErr(reasonAlgUnsupported, err)
	case tok != nil && tok.Method.Alg() == "none":
		return verifyErr(reasonAlgNone, err)
	case tok != nil && !v.allowed[tok.Method.Alg()]:
		return verifyErr(reasonAlgRefused, err)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return verifyErr(reasonSignature, err)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return verifyErr(missingClaimReason(claims), err)
	case errors.Is(err, jwt.ErrTokenExpired):
		return verifyErr(reasonExpired, err)
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return verifyErr(reasonNotYetValid, err)
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return verifyErr(reasonIssuedInFuture, err)
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return verifyErr(reasonIssuer, err)
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return verifyErr(reasonAudience, err)
	default:
		return verifyErr(reasonInvalid, err)
	}
}

// missingClaimReason names the first required registered claim that is
// absent, in the order exp, iss, aud.
func missingClaimReason(c *tokenClaims) string {
	switch {
	case c.ExpiresAt == nil:
		return reasonNoExp
	case c.Issuer == "":
		return reasonNoIssuer
	case len(c.Audience) == 0 || len(c.Audience) == 1 && c.Audience[0] == "":
		return reasonNoAudience
	default:
		return reasonInvalid
	}
}

// orDefault returns v, or def when v is the zero value.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
