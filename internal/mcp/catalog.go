package mcp

import (
	"bytes"
	"encoding/json"
)

// GoldenFile is where the generated tool list is pinned, relative to this
// package: `go generate` rewrites it and a test compares, so a change of the
// schema or of an operation document that alters what agents see shows in
// review, and scripts/verify fails on drift.
const GoldenFile = "testdata/tools.golden.json"

// Catalog is the full generated tool list as indented JSON: every tool a
// contributor sees with the ad-hoc tools on and the listed mutations.
func Catalog() ([]byte, error) {
	s, err := build(Options{Execute: true, Schema: true})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s.Tools(true)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
