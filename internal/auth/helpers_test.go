package auth

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// testSecret is a development secret of the minimum size.
var testSecret = []byte("0123456789abcdef0123456789abcdef")

// testKeys are generated once per test binary: RSA generation is slow.
var testKeys = sync.OnceValue(func() struct {
	rsa1, rsa2 *rsa.PrivateKey
	ed1, ed2   ed25519.PrivateKey
} {
	var k struct {
		rsa1, rsa2 *rsa.PrivateKey
		ed1, ed2   ed25519.PrivateKey
	}
	var err error
	if k.rsa1, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		panic(err)
	}
	if k.rsa2, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		panic(err)
	}
	if _, k.ed1, err = ed25519.GenerateKey(rand.Reader); err != nil {
		panic(err)
	}
	if _, k.ed2, err = ed25519.GenerateKey(rand.Reader); err != nil {
		panic(err)
	}
	return k
})

// publicPEM encodes a public key as a PKIX "PUBLIC KEY" PEM block.
func publicPEM(t testing.TB, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// fakeClock is a settable clock, safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// baseClaims returns a complete, valid claim set issued at now.
func baseClaims(now time.Time) jwt.MapClaims {
	return jwt.MapClaims{
		"iss":               "scidex",
		"aud":               "scidex",
		"sub":               "actor:alice",
		"exp":               now.Add(time.Hour).Unix(),
		"iat":               now.Unix(),
		"actor_kind":        "human",
		"permissions":       []string{"contributor", "reviewer"},
		"session_id":        "sess-1",
		"parent_session_id": "sess-0",
		"delegation_chain":  []string{"actor:org", "actor:bob"},
	}
}

// with returns a copy of c with the given members set; a nil value deletes.
func with(c jwt.MapClaims, kv ...any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// sign signs claims with method and key, adding header members (kid, …).
func sign(t testing.TB, method jwt.SigningMethod, key any, claims jwt.MapClaims, header ...any) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	for i := 0; i < len(header); i += 2 {
		tok.Header[header[i].(string)] = header[i+1]
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rawToken assembles a token from a header, claims and signature bytes,
// without any library checks, for algorithms the library will not sign.
func rawToken(t testing.TB, header map[string]any, claims jwt.MapClaims, sig []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	c, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(h) + "." + enc.EncodeToString(c) + "." + enc.EncodeToString(sig)
}

// wantReason checks err is a *VerifyError wrapping ErrUnauthenticated with the
// given reason, and that neither its message nor its cause leaks a secret.
func wantReason(t testing.TB, err error, reason string, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %q, got success", reason)
	}
	if !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("error %v does not wrap ErrUnauthenticated", err)
	}
	var ve *VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is not a *VerifyError", err)
	}
	if ve.Reason != reason || Reason(err) != reason {
		t.Errorf("reason = %q, want %q (cause: %v)", ve.Reason, reason, ve.Cause())
	}
	noLeak(t, err, secrets...)
}

// noLeak checks that no rendering of err or its cause contains a secret.
func noLeak(t testing.TB, err error, secrets ...string) {
	t.Helper()
	texts := []string{err.Error()}
	var ve *VerifyError
	if errors.As(err, &ve) && ve.Cause() != nil {
		texts = append(texts, ve.Cause().Error())
	}
	for _, text := range texts {
		for _, s := range secrets {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("error text %q contains a secret or the token", text)
			}
		}
	}
}
