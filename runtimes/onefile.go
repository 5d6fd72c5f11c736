package runtimes

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
)

// OneFile is a bundle of one file held in memory: a worker script compiled
// into the binary (chem.sar_table's, notebook.execute's), a job's script
// (gpu.submit's). File is its entry for Tool.Files, hashed; as a Bundle it
// serves that file and no other.
type OneFile struct {
	Path    string
	Content []byte
}

// File is the bundle's one entry, with its sha256 and size.
func (o OneFile) File() File {
	sum := sha256.Sum256(o.Content)
	return File{Path: o.Path, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(o.Content))}
}

// Open serves the file; any other path is an error.
func (o OneFile) Open(_ context.Context, f File) (io.ReadCloser, error) {
	if f.Path != o.Path {
		return nil, fmt.Errorf("the bundle of %s has no file %q", o.Path, f.Path)
	}
	return io.NopCloser(bytes.NewReader(o.Content)), nil
}
