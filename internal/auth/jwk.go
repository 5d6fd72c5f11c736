package auth

import (
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
)

// jwkKey is one usable key from a JWKS: the public key and the one algorithm
// it may verify.
type jwkKey struct {
	alg string
	key any
}

// jwk is the JSON shape of a JSON Web Key (RFC 7517), limited to the members
// this package reads.
type jwk struct {
	Kty    string   `json:"kty"`
	Kid    string   `json:"kid"`
	Use    string   `json:"use"`
	Alg    string   `json:"alg"`
	KeyOps []string `json:"key_ops"`
	Crv    string   `json:"crv"`
	N      string   `json:"n"`
	E      string   `json:"e"`
	X      string   `json:"x"`
}

// errSkipKey marks a JWK that is well formed but not for us (another key type,
// an encryption key, an algorithm we do not accept). Such keys are ignored.
var errSkipKey = errors.New("key not usable for signature verification here")

// parseJWK turns one JWK into a usable key. It returns errSkipKey for keys this
// verifier does not use and another error for keys it cannot read.
func parseJWK(raw json.RawMessage) (string, jwkKey, error) {
	var k jwk
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", jwkKey{}, errors.New("JWK is not a JSON object of strings")
	}
	if k.Kid == "" {
		return "", jwkKey{}, errSkipKey // tokens must name their key, so a key without kid is unreachable
	}
	if k.Use != "" && k.Use != "sig" {
		return "", jwkKey{}, errSkipKey
	}
	if len(k.KeyOps) > 0 && !slices.Contains(k.KeyOps, "verify") {
		return "", jwkKey{}, errSkipKey
	}
	switch k.Kty {
	case "RSA":
		if k.Alg != "" && k.Alg != algRS256 {
			return "", jwkKey{}, errSkipKey
		}
		pub, err := rsaFromJWK(k.N, k.E)
		if err != nil {
			return "", jwkKey{}, err
		}
		return k.Kid, jwkKey{alg: algRS256, key: pub}, nil
	case "OKP":
		if k.Crv != "Ed25519" {
			return "", jwkKey{}, errSkipKey
		}
		// "EdDSA" is the classic JOSE name; "Ed25519" is the fully specified
		// name of RFC 9864. Both mean the same signature here.
		if k.Alg != "" && k.Alg != algEdDSA && k.Alg != "Ed25519" {
			return "", jwkKey{}, errSkipKey
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return "", jwkKey{}, errors.New("OKP JWK has an invalid x")
		}
		return k.Kid, jwkKey{alg: algEdDSA, key: ed25519.PublicKey(x)}, nil
	default:
		return "", jwkKey{}, errSkipKey
	}
}

// rsaFromJWK builds an RSA public key from the base64url modulus and exponent.
func rsaFromJWK(n64, e64 string) (*rsa.PublicKey, error) {
	nb, err := base64.RawURLEncoding.DecodeString(n64)
	if err != nil || len(nb) == 0 {
		return nil, errors.New("RSA JWK has an invalid n")
	}
	eb, err := base64.RawURLEncoding.DecodeString(e64)
	if err != nil || len(eb) == 0 || len(eb) > 4 {
		return nil, errors.New("RSA JWK has an invalid e")
	}
	e := 0
	for _, b := range eb {
		e = e<<8 | int(b)
	}
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(nb), E: e}
	if err := checkRSAKey(pub); err != nil {
		return nil, fmt.Errorf("RSA JWK: %w", err)
	}
	return pub, nil
}
