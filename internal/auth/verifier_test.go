package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// leakCandidates lists what must never appear in an error: the token, each
// of its segments, and the secret in its usual encodings.
func leakCandidates(token string) []string {
	out := []string{
		string(testSecret),
		hex.EncodeToString(testSecret),
		base64.StdEncoding.EncodeToString(testSecret),
		base64.RawURLEncoding.EncodeToString(testSecret),
	}
	if len(token) >= 8 {
		out = append(out, token)
	}
	for _, seg := range strings.Split(token, ".") {
		if len(seg) >= 8 {
			out = append(out, seg)
		}
	}
	return out
}

func hsVerifier(t *testing.T, clock *fakeClock) *Verifier {
	t.Helper()
	v, err := NewVerifier(VerifierOpts{HS256Secret: testSecret, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerifyValidHS256TokenYieldsEveryClaim(t *testing.T) {
	clock := newFakeClock()
	now := clock.Now()
	v := hsVerifier(t, clock)
	token := sign(t, jwt.SigningMethodHS256, testSecret, baseClaims(now))

	p, err := v.Verify(context.Background(), token)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if p.ID != "actor:alice" || p.Kind != KindHuman {
		t.Errorf("actor = %q/%q", p.ID, p.Kind)
	}
	if !slices.Equal(p.Permissions, []Permission{PermContributor, PermReviewer}) {
		t.Errorf("permissions = %v", p.Permissions)
	}
	if p.SessionID != "sess-1" || p.ParentSessionID != "sess-0" {
		t.Errorf("sessions = %q/%q", p.SessionID, p.ParentSessionID)
	}
	if !slices.Equal(p.DelegationChain, DelegationChain{{ActorID: "actor:org"}, {ActorID: "actor:bob"}}) {
		t.Errorf("delegation chain = %v", p.DelegationChain)
	}
	if !p.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Errorf("expires at %v, want %v", p.ExpiresAt, now.Add(time.Hour))
	}
	if !p.Has(PermViewer) || !p.Has(PermReviewer) || p.Has(PermAdmin) {
		t.Errorf("Has does not follow the hierarchy for %v", p.Permissions)
	}
}

func TestVerifyAcceptsOptionalClaimsAbsentAndAudienceList(t *testing.T) {
	clock := newFakeClock()
	v := hsVerifier(t, clock)
	claims := with(baseClaims(clock.Now()),
		"session_id", nil, "parent_session_id", nil, "delegation_chain", nil, "permissions", nil,
		"aud", []string{"other", "scidex"})
	p, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, testSecret, claims))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if p.SessionID != "" || len(p.DelegationChain) != 0 || len(p.Permissions) != 0 {
		t.Errorf("unexpected optional claims in %+v", p)
	}
	if p.Has(PermViewer) {
		t.Error("an actor with no permissions has viewer")
	}
}

func TestVerifyRejects(t *testing.T) {
	clock := newFakeClock()
	now := clock.Now()
	v := hsVerifier(t, clock)
	good := baseClaims(now)
	hs := func(c jwt.MapClaims) string { return sign(t, jwt.SigningMethodHS256, testSecret, c) }
	otherSecret := []byte("ffffffffffffffffffffffffffffffff")

	tampered := func() string {
		parts := strings.Split(hs(good), ".")
		evil, _ := jsonB64(with(good, "permissions", []string{"admin"}))
		return parts[0] + "." + evil + "." + parts[2]
	}

	tests := []struct {
		name   string
		token  string
		reason string
	}{
		{"empty", "", "token missing"},
		{"not a jwt", "not-a-jwt", "token malformed"},
		{"four segments", hs(good) + ".x", "token malformed"},
		{"bad base64 header", "!!!." + strings.SplitN(hs(good), ".", 2)[1], "token malformed"},
		{"too large", hs(with(good, "pad", strings.Repeat("x", MaxTokenBytes))), "token too large"},
		{"alg none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, good), "algorithm none not allowed"},
		{"alg none with signature", rawToken(t, map[string]any{"alg": "none", "typ": "JWT"}, good, []byte("sig")), "algorithm none not allowed"},
		{"unknown alg", rawToken(t, map[string]any{"alg": "XS999", "typ": "JWT"}, good, []byte("sig")), "token algorithm not supported"},
		{"no alg", rawToken(t, map[string]any{"typ": "JWT"}, good, []byte("sig")), "token algorithm not supported"},
		{"HS512 with the right secret", sign(t, jwt.SigningMethodHS512, testSecret, good), "token algorithm not accepted"},
		{"wrong secret", sign(t, jwt.SigningMethodHS256, otherSecret, good), "token signature invalid"},
		{"tampered payload", tampered(), "token signature invalid"},
		{"expired", hs(with(good, "exp", now.Add(-time.Hour).Unix())), "token expired"},
		{"expired beyond leeway", hs(with(good, "exp", now.Add(-DefaultLeeway-time.Second).Unix())), "token expired"},
		{"missing exp", hs(with(good, "exp", nil)), "token has no exp claim"},
		{"exp not a number", hs(with(good, "exp", "tomorrow")), "token malformed"},
		{"not yet valid", hs(with(good, "nbf", now.Add(time.Hour).Unix())), "token not valid yet"},
		{"issued in the future", hs(with(good, "iat", now.Add(time.Hour).Unix())), "token issued in the future"},
		{"wrong audience", hs(with(good, "aud", "elsewhere")), "token audience not accepted"},
		{"missing audience", hs(with(good, "aud", nil)), "token has no aud claim"},
		{"wrong issuer", hs(with(good, "iss", "evil")), "token issuer not accepted"},
		{"missing issuer", hs(with(good, "iss", nil)), "token has no iss claim"},
		{"missing sub", hs(with(good, "sub", nil)), "token has no sub claim"},
		{"empty sub", hs(with(good, "sub", "")), "token has no sub claim"},
		{"the server's own actor", hs(with(good, "sub", "system")), "token sub claim reserved"},
		{"missing actor_kind", hs(with(good, "actor_kind", nil)), "token has no actor_kind claim"},
		{"bad actor_kind", hs(with(good, "actor_kind", "robot")), "token actor_kind not accepted"},
		{"unknown permission", hs(with(good, "permissions", []string{"viewer", "superuser"})), "token has unknown permission"},
		{"permissions not a list", hs(with(good, "permissions", "admin")), "token malformed"},
		{"empty delegate", hs(with(good, "delegation_chain", []string{"actor:org", ""})), "token delegation chain invalid"},
		{"crit header", sign(t, jwt.SigningMethodHS256, testSecret, good, "crit", []string{"exp"}), "token has unsupported critical header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), tt.token)
			if p != nil {
				t.Errorf("got a principal %+v for a bad token", p)
			}
			wantReason(t, err, tt.reason, leakCandidates(tt.token)...)
		})
	}
}

// jsonB64 encodes claims as a JWT segment.
func jsonB64(c jwt.MapClaims) (string, error) {
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	s, err := tok.SigningString()
	if err != nil {
		return "", err
	}
	return strings.Split(s, ".")[1], nil
}

func TestVerifyLeeway(t *testing.T) {
	clock := newFakeClock()
	now := clock.Now()
	good := baseClaims(now)
	token := sign(t, jwt.SigningMethodHS256, testSecret, with(good,
		"exp", now.Add(-10*time.Second).Unix(),
		"nbf", now.Add(10*time.Second).Unix(),
		"iat", now.Add(10*time.Second).Unix()))

	if _, err := hsVerifier(t, clock).Verify(context.Background(), token); err != nil {
		t.Errorf("default leeway: %v", err)
	}
	strict, err := NewVerifier(VerifierOpts{HS256Secret: testSecret, Now: clock.Now, Leeway: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = strict.Verify(context.Background(), token)
	wantReason(t, err, "token expired")
}

func TestVerifyCustomIssuerAndAudience(t *testing.T) {
	clock := newFakeClock()
	v, err := NewVerifier(VerifierOpts{HS256Secret: testSecret, Issuer: "idp", Audience: "api", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	good := with(baseClaims(clock.Now()), "iss", "idp", "aud", "api")
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, testSecret, good)); err != nil {
		t.Errorf("custom iss/aud: %v", err)
	}
	_, err = v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, testSecret, baseClaims(clock.Now())))
	wantReason(t, err, "token issuer not accepted")
}

func TestAlgorithmPinning(t *testing.T) {
	k := testKeys()
	clock := newFakeClock()
	good := baseClaims(clock.Now())
	rsaPEM := publicPEM(t, &k.rsa1.PublicKey)
	edPEM := publicPEM(t, k.ed1.Public())

	rsaOnly, err := NewVerifier(VerifierOpts{PublicKeysPEM: [][]byte{rsaPEM}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	edOnly, err := NewVerifier(VerifierOpts{PublicKeysPEM: [][]byte{edPEM}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := NewVerifier(VerifierOpts{HS256Secret: testSecret, PublicKeysPEM: [][]byte{rsaPEM, edPEM}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		v      *Verifier
		token  string
		reason string // "" means the token must verify
	}{
		{"RS256 via PEM", rsaOnly, sign(t, jwt.SigningMethodRS256, k.rsa1, good), ""},
		{"EdDSA via PEM", edOnly, sign(t, jwt.SigningMethodEdDSA, k.ed1, good), ""},
		{"RS256 with a kid via PEM", rsaOnly, sign(t, jwt.SigningMethodRS256, k.rsa1, good, "kid", "any"), ""},
		{"mixed: HS256", mixed, sign(t, jwt.SigningMethodHS256, testSecret, good), ""},
		{"mixed: RS256", mixed, sign(t, jwt.SigningMethodRS256, k.rsa1, good), ""},
		{"mixed: EdDSA", mixed, sign(t, jwt.SigningMethodEdDSA, k.ed1, good), ""},
		{"HS256 to an RS256-only verifier", rsaOnly, sign(t, jwt.SigningMethodHS256, testSecret, good), "token algorithm not accepted"},
		{"key confusion: HS256 keyed with the RSA PEM", rsaOnly, sign(t, jwt.SigningMethodHS256, rsaPEM, good), "token algorithm not accepted"},
		{"key confusion against a verifier that also has a secret", mixed, sign(t, jwt.SigningMethodHS256, rsaPEM, good), "token signature invalid"},
		{"key confusion: HS256 keyed with the Ed25519 PEM", edOnly, sign(t, jwt.SigningMethodHS256, edPEM, good), "token algorithm not accepted"},
		{"EdDSA to an RS256-only verifier", rsaOnly, sign(t, jwt.SigningMethodEdDSA, k.ed1, good), "token algorithm not accepted"},
		{"RS256 to an EdDSA-only verifier", edOnly, sign(t, jwt.SigningMethodRS256, k.rsa1, good), "token algorithm not accepted"},
		{"RS384 with the right key", rsaOnly, sign(t, jwt.SigningMethodRS384, k.rsa1, good), "token algorithm not accepted"},
		{"PS256 with the right key", rsaOnly, sign(t, jwt.SigningMethodPS256, k.rsa1, good), "token algorithm not accepted"},
		{"RS256 by another RSA key", rsaOnly, sign(t, jwt.SigningMethodRS256, k.rsa2, good), "token signature invalid"},
		{"EdDSA by another Ed25519 key", edOnly, sign(t, jwt.SigningMethodEdDSA, k.ed2, good), "token signature invalid"},
		{"alg none to a PEM verifier", rsaOnly, sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, good), "algorithm none not allowed"},
		{"RS256 expired", rsaOnly, sign(t, jwt.SigningMethodRS256, k.rsa1, with(good, "exp", clock.Now().Add(-time.Hour).Unix())), "token expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.v.Verify(context.Background(), tt.token)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Verify: %v (cause %v)", err, err.(*VerifyError).Cause())
				}
				if p.ID != "actor:alice" {
					t.Errorf("sub = %q", p.ID)
				}
				return
			}
			wantReason(t, err, tt.reason, append(leakCandidates(tt.token), string(rsaPEM), string(edPEM))...)
		})
	}
}

func TestVerifyPEMKeySetTriesEachKeyOfTheType(t *testing.T) {
	k := testKeys()
	clock := newFakeClock()
	bundle := append(publicPEM(t, &k.rsa1.PublicKey), publicPEM(t, &k.rsa2.PublicKey)...)
	v, err := NewVerifier(VerifierOpts{PublicKeysPEM: [][]byte{bundle}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []*rsa.PrivateKey{k.rsa1, k.rsa2} {
		if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, key, baseClaims(clock.Now()))); err != nil {
			t.Errorf("Verify: %v", err)
		}
	}
	pkcs1 := pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&k.rsa2.PublicKey)})
	v, err = NewVerifier(VerifierOpts{PublicKeysPEM: [][]byte{pkcs1}, Now: clock.Now})
	if err != nil {
		t.Fatalf("PKCS #1 PEM: %v", err)
	}
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, k.rsa2, baseClaims(clock.Now()))); err != nil {
		t.Errorf("PKCS #1 key: %v", err)
	}
}

func TestNewVerifierRefusesBadConfig(t *testing.T) {
	k := testKeys()
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(k.ed1)
	if err != nil {
		t.Fatal(err)
	}
	privPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER})

	tests := []struct {
		name string
		opts VerifierOpts
		want string
	}{
		{"no key source", VerifierOpts{}, "no key source"},
		{"short secret", VerifierOpts{HS256Secret: []byte("short")}, "at least 32"},
		{"not PEM", VerifierOpts{PublicKeysPEM: [][]byte{[]byte("hello")}}, "no PEM block"},
		{"private key", VerifierOpts{PublicKeysPEM: [][]byte{privPEM}}, "private key"},
		{"EC key", VerifierOpts{PublicKeysPEM: [][]byte{publicPEM(t, &ec.PublicKey)}}, "unsupported public key type"},
		{"small RSA key", VerifierOpts{PublicKeysPEM: [][]byte{publicPEM(t, &small.PublicKey)}}, "at least 2048"},
		{"garbage in PEM", VerifierOpts{PublicKeysPEM: [][]byte{pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte("junk")})}}, "cannot parse"},
		{"trailing data", VerifierOpts{PublicKeysPEM: [][]byte{append(publicPEM(t, k.ed1.Public()), "junk"...)}}, "trailing data"},
		{"plain http JWKS", VerifierOpts{JWKSURL: "http://idp.example.com/jwks.json"}, "https"},
		{"ftp JWKS", VerifierOpts{JWKSURL: "ftp://idp.example.com/jwks.json"}, "https"},
		{"negative leeway", VerifierOpts{HS256Secret: testSecret, Leeway: -time.Second}, "leeway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := NewVerifier(tt.opts)
			if err == nil {
				t.Fatalf("NewVerifier succeeded (%v), want error containing %q", v, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "BEGIN") || strings.Contains(err.Error(), string(privDER[:8])) {
				t.Errorf("error %q shows key material", err)
			}
		})
	}
	for _, url := range []string{"https://idp.example.com/jwks.json", "http://127.0.0.1:8080/jwks", "http://localhost/jwks", "http://[::1]/jwks"} {
		if _, err := NewVerifier(VerifierOpts{JWKSURL: url}); err != nil {
			t.Errorf("JWKS URL %s: %v", url, err)
		}
	}
}

func TestVerifyIsSafeForConcurrentUse(t *testing.T) {
	k := testKeys()
	clock := newFakeClock()
	v, err := NewVerifier(VerifierOpts{
		HS256Secret:   testSecret,
		PublicKeysPEM: [][]byte{publicPEM(t, &k.rsa1.PublicKey), publicPEM(t, k.ed1.Public())},
		Now:           clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	good := baseClaims(clock.Now())
	tokens := []string{
		sign(t, jwt.SigningMethodHS256, testSecret, good),
		sign(t, jwt.SigningMethodRS256, k.rsa1, good),
		sign(t, jwt.SigningMethodEdDSA, k.ed1, good),
	}
	bad := sign(t, jwt.SigningMethodHS256, []byte("ffffffffffffffffffffffffffffffff"), good)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			if _, err := v.Verify(context.Background(), tokens[i%len(tokens)]); err != nil {
				t.Errorf("Verify: %v", err)
			}
			if _, err := v.Verify(context.Background(), bad); err == nil {
				t.Error("bad token verified")
			}
		})
	}
	wg.Wait()
}
