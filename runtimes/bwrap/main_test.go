package bwrap_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// shimBin is cmd/scidex-egress-shim, built once for the tests' networked
// sandboxes.
var shimBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bwrap-shim-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	shimBin = filepath.Join(dir, "scidex-egress-shim")
	cmd := exec.Command("go", "build", "-o", shimBin, "github.com/scidex/substrate/cmd/scidex-egress-shim")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the egress shim: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
