package pgembed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDataDirUnderNonTraversableParent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root drops to an unprivileged OS user")
	}
	parent := t.TempDir() // 0700, owned by root: the cluster's user cannot enter
	if err := os.Chmod(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "scidex", "postgres")
	_, err := Start(ctxFor(t), Options{Dir: dir, Logger: testLogger(t)})
	if err == nil {
		t.Fatal("Start succeeded under a non-traversable parent")
	}
	t.Logf("error message: %v", err)
	for _, want := range []string{parent, "not traversable", "/var/lib/scidex"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
	if fi, _ := os.Stat(parent); fi.Mode().Perm() != 0o700 {
		t.Errorf("Start changed the mode of %s to %v", parent, fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Dir(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Start created directories before failing")
	}
}

func TestSocketPathTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100), "postgres")
	_, err := Start(ctxFor(t), Options{Dir: dir, Logger: testLogger(t)})
	if err == nil || !strings.Contains(err.Error(), "107") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err = %v, want the 107-byte socket limit and the directory", err)
	}
}

func TestManagedSettingsRejected(t *testing.T) {
	_, err := Start(ctxFor(t), Options{Dir: t.TempDir(), Settings: map[string]string{"listen_addresses": "*"}})
	if err == nil || !strings.Contains(err.Error(), "listen_addresses") {
		t.Fatalf("err = %v, want listen_addresses rejected", err)
	}
}
