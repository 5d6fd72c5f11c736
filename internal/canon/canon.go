// Package canon computes content hashes: sha256 over the RFC 8785 canonical JSON
// (JCS) of an artifact's mutable fields. Canonical JSON makes the hash independent
// of key order, whitespace and number spelling, so two writers who send the same
// content get the same hash whatever their JSON library does.
package canon

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"
)

// Prefix starts every content hash, naming the algorithm.
const Prefix = "sha256:"

// Fields are the parts of an artifact that its content hash covers.
type Fields struct {
	Title          string          `json:"title"`
	Content        json.RawMessage `json:"content"`
	LifecycleState *string         `json:"lifecycle_state"`
}

// Hash returns "sha256:<hex>" of the canonical JSON of f.
func Hash(f Fields) (string, error) {
	doc, err := json.Marshal(f)
	if err != nil {
		return "", fmt.Errorf("content hash: encode: %w", err)
	}
	return HashJSON(doc)
}

// HashJSON returns "sha256:<hex>" of the canonical form of any JSON document.
func HashJSON(doc []byte) (string, error) {
	c, err := Canonical(doc)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return Prefix + hex.EncodeToString(sum[:]), nil
}

// Canonical returns the RFC 8785 form of a JSON document.
func Canonical(doc []byte) ([]byte, error) {
	c, err := jcs.Transform(doc)
	if err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	return c, nil
}
