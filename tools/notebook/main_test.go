package notebook_test

import (
	"os"
	"testing"

	"github.com/scidex/substrate/internal/dbtest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }
