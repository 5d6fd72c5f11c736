package main

import (
	"os"
	"testing"

	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

func TestMain(m *testing.M) {
	code := dbtest.Main(m)
	e2e.RemoveBinary()
	os.Exit(code)
}
