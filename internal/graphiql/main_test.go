package graphiql

import (
	"os"
	"testing"

	"github.com/scidex/substrate/internal/e2e"
)

// The binary the browser test built, and whatever else the harness left, is
// removed when the tests end.
func TestMain(m *testing.M) {
	code := m.Run()
	e2e.RemoveBinary()
	os.Exit(code)
}
