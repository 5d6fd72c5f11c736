package skillcall_test

import (
	"os"
	"testing"

	"github.com/scidex/substrate/internal/dbtest"
)

// The package's private cluster, when no test server is configured, is
// stopped when its tests end.
func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }
