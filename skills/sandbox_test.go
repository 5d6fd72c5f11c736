package skills

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/scidex/substrate/runtimes/bwrap"
	"github.com/scidex/substrate/skills/chem"
)

// testSandbox is the bwrap runtime chem.sar_table's worker runs in, over a
// cache the sandbox uid can reach; nil (the skill refuses to run) where the
// machine has no bwrap or no Debian RDKit (scripts/deps installs both).
func testSandbox(t testing.TB) chem.Sandbox {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		return nil
	}
	if exec.Command("/usr/bin/python3", "-IS", "-c", "import sys; sys.path.append('/usr/lib/python3/dist-packages'); import rdkit").Run() != nil {
		return nil
	}
	dir, err := os.MkdirTemp("", "skills-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rt, err := bwrap.New(bwrap.Options{CacheDir: filepath.Join(dir, "cache"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestSandbox is testSandbox for the external tests.
var TestSandbox = testSandbox
