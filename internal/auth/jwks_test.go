package auth

import (
	"context"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// jwksServer serves a JWK set that tests can change, and counts fetches.
type jwksServer struct {
	*httptest.Server
	mu     sync.Mutex
	body   []byte
	status int
	hits   atomic.Int64
}

func newJWKSServer(t *testing.T, keys ...map[string]any) *jwksServer {
	t.Helper()
	s := &jwksServer{status: http.StatusOK}
	s.set(t, keys...)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		body, status := s.body, s.status
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(t *testing.T, keys ...map[string]any) {
	t.Helper()
	if keys == nil {
		keys = []map[string]any{}
	}
	body, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	s.setRaw(http.StatusOK, body)
}

func (s *jwksServer) setRaw(status int, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

func rsaJWK(kid string, pub *rsa.PublicKey, extra ...string) map[string]any {
	m := map[string]any{
		"kty": "RSA", "kid": kid, "use": "sig",
		"n": base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}
	for i := 0; i < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

func edJWK(kid string, priv ed25519.PrivateKey, extra ...string) map[string]any {
	m := map[string]any{
		"kty": "OKP", "crv": "Ed25519", "kid": kid,
		"x": base64.RawURLEncoding.EncodeToString(priv.Public().(ed25519.PublicKey)),
	}
	for i := 0; i < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

func jwksVerifier(t *testing.T, url string, clock *fakeClock) *Verifier {
	t.Helper()
	v, err := NewVerifier(VerifierOpts{JWKSURL: url, Now: clock.Now, JWKSMinRefresh: time.Minute, JWKSMaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestJWKSVerifiesRS256AndEdDSA(t *testing.T) {
	k := testKeys()
	clock := newFakeClock()
	srv := newJWKSServer(t,
		rsaJWK("rsa-1", &k.rsa1.PublicKey, "alg", "RS256"),
		edJWK("ed-1", k.ed1, "alg", "EdDSA"),
		edJWK("ed-2", k.ed2, "alg", "Ed25519"),
		map[string]any{"kty": "EC", "kid": "ec-1", "crv": "P-256", "x": "AA", "y": "AA"}, // ignored, not an error
		map[string]any{"kty": "oct", "kid": "sym", "k": "c2VjcmV0"},                      // never usable
	)
	v := jwksVerifier(t, srv.URL, clock)
	good := baseClaims(clock.Now())

	tests := []struct {
		name   string
		token  string
		reason string
	}{
		{"RS256", sign(t, jwt.SigningMethodRS256, k.rsa1, good, "kid", "rsa-1"), ""},
		{"EdDSA", sign(t, jwt.SigningMethodEdDSA, k.ed1, good, "kid", "ed-1"), ""},
		{"EdDSA, JWK alg Ed25519", sign(t, jwt.SigningMethodEdDSA, k.ed2, good, "kid", "ed-2"), ""},
		{"no kid", sign(t, jwt.SigningMethodRS256, k.rsa1, good), "token has no key id"},
		{"kid not a string", sign(t, jwt.SigningMethodRS256, k.rsa1, good, "kid", 7), "token key id invalid"},
		{"EdDSA token naming an RSA kid", sign(t, jwt.SigningMethodEdDSA, k.ed1, good, "kid", "rsa-1"), "token algorithm does not match key"},
		{"RS256 token naming an Ed25519 kid", sign(t, jwt.SigningMethodRS256, k.rsa1, good, "kid", "ed-1"), "token algorithm does not match key"},
		{"right kid, wrong key", sign(t, jwt.SigningMethodRS256, k.rsa2, good, "kid", "rsa-1"), "token signature invalid"},
		{"HS256 keyed with the JWK", sign(t, jwt.SigningMethodHS256, []byte(srv.URL), good, "kid", "rsa-1"), "token algorithm not accepted"},
		{"symmetric JWK is not a key", sign(t, jwt.SigningMethodHS256, []byte("secret"), good, "kid", "sym"), "token algorithm not accepted"},
		{"EC kid", sign(t, jwt.SigningMethodRS256, k.rsa1, good, "kid", "ec-1"), "token key id unknown"},
		{"expired", sign(t, jwt.SigningMethodRS256, k.rsa1, with(good, "exp", clock.Now().Add(-time.Hour).Unix()), "kid", "rsa-1"), "token expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), tt.token)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Verify: %v (cause %v)", err, err.(*VerifyError).Cause())
				}
				if p.ID != "actor:alice" {
					t.Errorf("sub = %q", p.ID)
				}
				return
			}
			wantReason(t, err, tt.reason, leakCandidates(tt.token)...)
		})
	}
}

func TestJWKSHonoursKeyAlg(t *testing.T) {
	k := testKeys()
	clock := newFakeClock()
	srv := newJWKSServer(t,
		rsaJWK("rs512-only", &k.rsa1.PublicKey, "alg", "RS512"),
		rsaJWK("enc", &k.rsa1.PublicKey, "use", "enc"),
		rsaJWK("sign-only", &k.rsa1.PublicKey, "alg", "RS256"),
	)
	v := jwksVerifier(t, srv.URL, clock)
	good := baseClaims(clock.Now())
	for _, kid := range []string{"rs512-only", "enc"} {
		_, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, k.rsa1, good, "kid", kid))
		wantReason(t, err, "token key id unknown")
	}
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, k.rsa1, good, "kid", "sign-only")); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestJWKSKeyRotationAndRefreshRateLimit(t *testing.T) {
	k := testKeys()
	clock := newFakeClock()
	srv := newJWKSServer(t, rsaJWK("old", &k.rsa1.PublicKey))
	v := jwksVerifier(t, srv.URL, clock) // min refresh one minute
	ctx := context.Background()
	oldTok := sign(t, jwt.SigningMethodRS256, k.rsa1, baseClaims(clock.Now()), "kid", "old")
	newTok := sign(t, jwt.SigningMethodEdDSA, k.ed1, baseClaims(clock.Now()), "kid", "new")

	if _, err := v.Verify(ctx, oldTok); err != nil {
		t.Fatalf("old key: %v", err)
	}
	if got := srv.hits.Load(); got != 1 {
		t.Fatalf("fetches after first verify = %d, want 1", got)
	}
	if _, err := v.Verify(ctx, oldTok); err != nil || srv.hits.Load() != 1 {
		t.Fatalf("cached key: err %v, fetches %d; want nil, 1", err, srv.hits.Load())
	}

	// The issuer rotates: "new" appears after startup. The first token naming
	// it is more than a minute after the startup fetch, so it refreshes.
	srv.set(t, rsaJWK("old", &k.rsa1.PublicKey), edJWK("new", k.ed1))
	clock.Advance(2 * time.Minute)
	if _, err := v.Verify(ctx, newTok); err != nil {
		t.Fatalf("rotated-in key: %v", err)
	}
	if got := srv.hits.Load(); got != 2 {
		t.Fatalf("fetches after rotation = %d, want 2", got)
	}

	// A flood of unknown kids costs at most one fetch per minute.
	clock.Advance(time.Minute)
	for i := range 50 {
		forged := sign(t, jwt.SigningMethodRS256, k.rsa2, baseClaims(clock.Now()), "kid", "forged-"+string(rune('a'+i%26)))
		_, err := v.Verify(ctx, forged)
		wantReason(t, err, "token key id unknown")
	}
	if got := srv.hits.Load(); got != 3 {
		t.Fatalf("fetches after a flood of unknown kids = %d, want 3 (one refresh, then rate limited)", got)
	}

	// A key published inside the rate-limit window is picked up once it ends.
	third := sign(t, jwt.SigningMethodRS256, k.rsa2, baseClaims(clock.Now()), "kid", "third")
	srv.set(t, edJWK("new", k.ed1), rsaJWK("third", &k.rsa2.PublicKey))
	_, err := v.Verify(ctx, third)
	wantReason(t, err, "token key id unknown")
	clock.Advance(time.Minute)
	if _, err := v.Verify(ctx, third); err != nil {
		t.Fatalf("key published during the window: %v", err)
	}
	// The refresh replaced the set, so the retired key no longer verifies.
	_, err = v.Verify(ctx, oldTok)
	wantReason(t, err, "token key id unknown")
	if got := srv.hits.Load(); got != 4 {
		t.Errorf("fetches = %d, want 4", got)
	}
}

func TestJWKSConcurrentUnknownKidFetchesOnce(t *testing.T) {
	k := testKeys()
	clock := newFakeClock()
	srv := newJWKSServer(t, rsaJWK("k1", &k.rsa1.PublicKey))
	v := jwksVerifier(t, srv.URL, clock)
	good := sign(t, jwt.SigningMethodRS256, k.rsa1, baseClaims(clock.Now()), "kid", "k1")
	unknown := sign(t, jwt.SigningMethodRS256, k.rsa1, baseClaims(clock.Now()), "kid", "k2")

	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			tok := good
			if i%2 == 1 {
				tok = unknown
			}
			_, err := v.Verify(context.Background(), tok)
			if tok == good && err != nil {
				t.Errorf("Verify good: %v", err)
			}
			if tok == unknown && err == nil {
				t.Error("unknown kid verified")
			}
		})
	}
	wg.Wait()
	if got := srv.hits.Load(); got != 1 {
		t.Errorf("fetches = %d, want 1", got)
	}
}

func TestJWKSFetchFailures(t *testing.T) {
	k := testKeys()
	clock := newFakeClock()
	tok := sign(t, jwt.SigningMethodRS256, k.rsa1, baseClaims(clock.Now()), "kid", "k1")
	huge := `{"keys":[` + strings.Repeat(" ", maxJWKSBytes) + `]}`
	tests := []struct {
		name   string
		status int
		body   string
	}{
		{"server error", http.StatusInternalServerError, `{"keys":[]}`},
		{"not JSON", http.StatusOK, `<html>`},
		{"empty set", http.StatusOK, `{"keys":[]}`},
		{"too large", http.StatusOK, huge},
		{"bad modulus", http.StatusOK, `{"keys":[{"kty":"RSA","kid":"k1","n":"!!","e":"AQAB"}]}`},
		{"small RSA key", http.StatusOK, `{"keys":[{"kty":"RSA","kid":"k1","n":"AQAB","e":"AQAB"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newJWKSServer(t)
			srv.setRaw(tt.status, []byte(tt.body))
			v := jwksVerifier(t, srv.URL, clock)
			_, err := v.Verify(context.Background(), tok)
			wantReason(t, err, "token keys unavailable", leakCandidates(tok)...)
		})
	}
}

func TestJWKSStaleSetIsRefreshedAndKeptWhenHostFails(t *testing.T) {
	k := testKeys()
	clock := newFakeClock()
	srv := newJWKSServer(t, rsaJWK("k1", &k.rsa1.PublicKey), edJWK("k2", k.ed1))
	v := jwksVerifier(t, srv.URL, clock) // max age one hour
	ctx := context.Background()
	claims := func() jwt.MapClaims { return baseClaims(clock.Now()) }

	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, k.rsa1, claims(), "kid", "k1")); err != nil {
		t.Fatal(err)
	}
	// The host goes down; past max age, the cached keys still serve.
	srv.setRaw(http.StatusServiceUnavailable, nil)
	clock.Advance(2 * time.Hour)
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, k.rsa1, claims(), "kid", "k1")); err != nil {
		t.Fatalf("stale key while host is down: %v", err)
	}
	// The host returns without k1: the next refresh drops it.
	srv.set(t, edJWK("k2", k.ed1))
	clock.Advance(2 * time.Minute)
	_, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, k.rsa1, claims(), "kid", "k1"))
	wantReason(t, err, "token key id unknown")
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodEdDSA, k.ed1, claims(), "kid", "k2")); err != nil {
		t.Errorf("k2: %v", err)
	}
	if got := srv.hits.Load(); got != 3 {
		t.Errorf("fetches = %d, want 3", got)
	}
}

func TestJWKSCallerStopsWaitingButFetchCompletes(t *testing.T) {
	k := testKeys()
	clock := newFakeClock()
	release := make(chan struct{})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		<-release
		json.NewEncoder(w).Encode(map[string]any{"keys": []any{rsaJWK("k1", &k.rsa1.PublicKey)}})
	}))
	defer srv.Close()
	v := jwksVerifier(t, srv.URL, clock)
	tok := sign(t, jwt.SigningMethodRS256, k.rsa1, baseClaims(clock.Now()), "kid", "k1")

	// The JWKS host hangs: callers give up when their context ends.
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		_, err := v.Verify(ctx, tok)
		cancel()
		wantReason(t, err, "token keys unavailable")
	}
	// The host answers: the fetch the callers abandoned still fills the cache,
	// and no caller started a second one.
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := v.Verify(context.Background(), tok)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("abandoned fetch never filled the cache: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := hits.Load(); got != 1 {
		t.Errorf("fetches = %d, want 1", got)
	}
}
