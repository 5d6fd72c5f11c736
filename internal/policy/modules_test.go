package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goList runs `go list` in the repository root and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// sqlcOnly are modules that only sqlc needs: its other SQL engines' parsers,
// their drivers, its WebAssembly runtime and its plugin machinery. (cel.dev/expr
// is not among them any more: google.golang.org/grpc's go.mod requires it, and
// grpc is in the graph through the OTLP exporter's protobuf types; no package
// of it is built into the server, which TestServerBinaryLinksNoCEL checks.)
var sqlcOnly = []string{
	"github.com/sqlc-dev/", "github.com/pingcap/", "github.com/go-sql-driver/mysql", "github.com/tetratelabs/wazero",
	"github.com/ncruces/go-sqlite3", "github.com/google/cel-go", "github.com/pganalyze/pg_query_go",
	"github.com/wasilibs/", "github.com/riza-io/grpc-go", "github.com/antlr4-go/antlr", "go.uber.org/zap",
}

// sqlc runs from a module of its own (internal/tools/sqlc), so nothing it
// drags in is in the main module's graph, which the server is built from.
func TestMainModuleGraphHasNoSqlcDependencies(t *testing.T) {
	for _, line := range goList(t, "-m", "all") {
		for _, prefix := range sqlcOnly {
			if strings.HasPrefix(line, prefix) {
				t.Errorf("the main module's graph has %s, which only sqlc needs: pin sqlc in internal/tools/sqlc, not in go.mod", line)
			}
		}
	}
	tools, err := os.ReadFile(filepath.Join(root(t), "internal", "tools", "sqlc", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tools), "\ntool github.com/sqlc-dev/sqlc/cmd/sqlc\n") {
		t.Error("internal/tools/sqlc/go.mod does not pin sqlc as a tool")
	}
}

// A module in the graph only through another's requirements is not built:
// the server links no CEL package.
func TestServerBinaryLinksNoCEL(t *testing.T) {
	for _, dep := range goList(t, "-deps", "./cmd/scidex") {
		if strings.HasPrefix(dep, "cel.dev/") || strings.HasPrefix(dep, "github.com/google/cel-go") {
			t.Errorf("the server binary links %s", dep)
		}
	}
}

// graph/stock is gqlgen's unchanged executor, for the differential test and
// for a server that installs field middleware; the server binary serves the
// rewritten one and does not carry a second copy of the executor.
func TestServerBinaryDoesNotLinkTheStockExecutor(t *testing.T) {
	deps := goList(t, "-deps", "./cmd/scidex")
	if len(deps) < 10 {
		t.Fatalf("go list -deps ./cmd/scidex: %q", deps)
	}
	for _, p := range deps {
		if p == "github.com/scidex/substrate/graph/stock" {
			t.Error("cmd/scidex links graph/stock, the stock gqlgen executor; it serves graph's (see internal/server Opts.Executor)")
		}
	}
}
