package auth

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// SecretFileName is the file, inside the directory given to
// LoadOrCreateSecret, that holds the development HS256 secret.
const SecretFileName = "jwt-secret"

// secretSize is the number of random bytes in a newly created secret.
const secretSize = 32

// LoadOrCreateSecret returns the development HS256 secret kept in
// <dir>/jwt-secret, creating it on first use: 32 bytes from crypto/rand,
// stored hex-encoded in a file of mode 0600 (dir is created 0700 if needed).
// A file readable by group or others is refused rather than trusted.
//
// Creation writes a temporary file and hard-links it into place, which fails
// if the file already exists, so concurrent first calls — from goroutines or
// from separate processes — all end up with the one secret that won.
func LoadOrCreateSecret(dir string) ([]byte, error) {
	if dir == "" {
		return nil, errors.New("auth: secret directory is empty")
	}
	path := filepath.Join(dir, SecretFileName)
	secret, err := readSecret(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return secret, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("auth: creating secret directory: %w", err)
	}
	secret = make([]byte, secretSize)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("auth: generating secret: %w", err)
	}
	if err := writeSecretNoClobber(dir, path, secret); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readSecret(path) // another caller created it first: use theirs
		}
		return nil, err
	}
	return secret, nil
}

// ReadSecret returns the development secret of dir if there is one, without
// creating it (an error wrapping fs.ErrNotExist when there is none).
func ReadSecret(dir string) ([]byte, error) {
	return readSecret(filepath.Join(dir, SecretFileName))
}

// writeSecretNoClobber writes secret to a temporary file in dir and links it
// to path. It returns an error wrapping fs.ErrExist if path already exists.
func writeSecretNoClobber(dir, path string, secret []byte) error {
	tmp, err := os.CreateTemp(dir, ".jwt-secret-*")
	if err != nil {
		return fmt.Errorf("auth: creating secret file: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	werr := tmp.Chmod(0o600)
	if werr == nil {
		_, werr = tmp.WriteString(hex.EncodeToString(secret) + "\n")
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("auth: writing secret file: %w", werr)
	}
	if err := os.Link(tmpName, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("auth: installing secret file: %w", err)
	}
	return nil
}

// readSecret reads and checks an existing secret file. Errors describe the
// file, never its content.
func readSecret(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("auth: opening secret file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("auth: secret file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("auth: secret file %s is not a regular file", path)
	}
	if runtime.GOOS != "windows" && info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("auth: secret file %s has mode %#o; it must not be readable by group or others (chmod 600)", path, info.Mode().Perm())
	}
	raw, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, fmt.Errorf("auth: reading secret file: %w", err)
	}
	secret, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("auth: secret file %s is not hex-encoded", path)
	}
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("auth: secret file %s holds %d bytes, want at least %d", path, len(secret), MinSecretBytes)
	}
	return secret, nil
}
