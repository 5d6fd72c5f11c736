package auth

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// Algorithm names as they appear in a token's alg header.
const (
	algHS256 = "HS256"
	algRS256 = "RS256"
	algEdDSA = "EdDSA"
)

// MinSecretBytes is the shortest HS256 secret accepted by NewVerifier and Mint:
// 256 bits, the size of the HMAC-SHA256 output.
const MinSecretBytes = 32

// MinRSABits is the smallest RSA modulus accepted, from PEM or from a JWKS.
const MinRSABits = 2048

// maxRSABits bounds the RSA modulus so a hostile JWKS cannot make every
// verification expensive.
const maxRSABits = 8192

// staticKeys holds the public keys configured as PEM, split by the one
// algorithm each may verify.
type staticKeys struct {
	rsa []*rsa.PublicKey
	ed  []ed25519.PublicKey
}

// parsePublicKeysPEM reads every PEM block of every entry. Each block must be
// a PUBLIC KEY (PKIX, RSA or Ed25519), an RSA PUBLIC KEY (PKCS #1) or a
// CERTIFICATE whose key is RSA or Ed25519. Errors name the entry and block by
// position, never by content.
func parsePublicKeysPEM(entries [][]byte) (staticKeys, error) {
	var ks staticKeys
	for i, entry := range entries {
		rest := entry
		blocks := 0
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			blocks++
			key, err := publicKeyFromBlock(block)
			if err != nil {
				return staticKeys{}, fmt.Errorf("auth: public key %d, PEM block %d: %w", i+1, blocks, err)
			}
			switch k := key.(type) {
			case *rsa.PublicKey:
				ks.rsa = append(ks.rsa, k)
			case ed25519.PublicKey:
				ks.ed = append(ks.ed, k)
			}
		}
		if blocks == 0 {
			return staticKeys{}, fmt.Errorf("auth: public key %d: no PEM block found", i+1)
		}
		if len(bytes.TrimSpace(rest)) != 0 {
			return staticKeys{}, fmt.Errorf("auth: public key %d: trailing data after the last PEM block", i+1)
		}
	}
	return ks, nil
}

// publicKeyFromBlock extracts an RSA or Ed25519 public key from one PEM block.
func publicKeyFromBlock(block *pem.Block) (any, error) {
	var key any
	var err error
	switch block.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case "CERTIFICATE":
		var cert *x509.Certificate
		cert, err = x509.ParseCertificate(block.Bytes)
		if err == nil {
			key = cert.PublicKey
		}
	default:
		if bytes.Contains([]byte(block.Type), []byte("PRIVATE")) {
			return nil, errors.New("a private key was given where a public key is expected")
		}
		return nil, fmt.Errorf("unsupported PEM block type %q", truncate(block.Type, 32))
	}
	if err != nil {
		return nil, errors.New("cannot parse the public key")
	}
	switch k := key.(type) {
	case *rsa.PublicKey:
		if err := checkRSAKey(k); err != nil {
			return nil, err
		}
		return k, nil
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return nil, errors.New("ed25519 public key has the wrong size")
		}
		return k, nil
	default:
		return nil, fmt.Errorf("unsupported public key type %T (want RSA or Ed25519)", key)
	}
}

// checkRSAKey refuses RSA keys too small to be safe or too large to be cheap.
func checkRSAKey(k *rsa.PublicKey) error {
	if k.N == nil {
		return errors.New("RSA public key has no modulus")
	}
	bits := k.N.BitLen()
	if bits < MinRSABits {
		return fmt.Errorf("RSA public key has %d bits, want at least %d", bits, MinRSABits)
	}
	if bits > maxRSABits {
		return fmt.Errorf("RSA public key has %d bits, want at most %d", bits, maxRSABits)
	}
	if k.E < 3 || k.E%2 == 0 {
		return errors.New("RSA public exponent is invalid")
	}
	return nil
}
