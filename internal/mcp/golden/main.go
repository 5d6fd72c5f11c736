// Command golden writes internal/mcp's generated tool list to its golden file
// (run by `go generate ./internal/mcp`).
package main

import (
	"fmt"
	"os"

	"github.com/scidex/substrate/internal/mcp"
)

func main() {
	raw, err := mcp.Catalog()
	if err != nil {
		fmt.Fprintln(os.Stderr, "golden:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(mcp.GoldenFile, raw, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "golden:", err)
		os.Exit(1)
	}
}
