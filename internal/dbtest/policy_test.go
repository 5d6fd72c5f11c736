package dbtest_test

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	dbtestPkg = "github.com/scidex/substrate/internal/dbtest"
	e2ePkg    = "github.com/scidex/substrate/internal/e2e"
)

// Every package whose test binary links dbtest (directly or through a helper
// such as internal/apitest) has a TestMain that calls dbtest.Main, which
// stops the package's private cluster when the tests end; every one that links
// the e2e harness calls e2e.RemoveBinary (or dbtest.Main, which ends the same
// watchdog) there. The watchdog cleans up after a process that never gets
// there, but a run that ends normally should leave nothing even for a moment.
func TestEveryPackageStopsItsCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("lists every package of the module")
	}
	out, err := exec.Command("go", "list", "-e", "-f",
		"{{.ImportPath}}\t{{.Dir}}\t{{len .TestGoFiles}}{{len .XTestGoFiles}}\t{{join .Deps \" \"}}\t{{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}",
		"github.com/scidex/substrate/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct {
		dir           string
		deps, imports []string
		hasTests      bool
	}
	pkgs := map[string]*pkg{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 5 {
			t.Fatalf("go list: unexpected line %q", sc.Text())
		}
		pkgs[f[0]] = &pkg{dir: f[1], hasTests: f[2] != "00", deps: strings.Fields(f[3]), imports: strings.Fields(f[4])}
		order = append(order, f[0])
	}
	// A test binary links the package, its test files' imports and all
	// their dependencies.
	links := func(p *pkg, target string) bool {
		for _, d := range p.deps {
			if d == target {
				return true
			}
		}
		for _, imp := range p.imports {
			if imp == target {
				return true
			}
			if q := pkgs[imp]; q != nil {
				for _, d := range q.deps {
					if d == target {
						return true
					}
				}
			}
		}
		return false
	}
	checked := 0
	for _, path := range order {
		p := pkgs[path]
		if !p.hasTests {
			continue
		}
		var (
			want []string
			uses string
		)
		switch {
		case links(p, dbtestPkg):
			want, uses = []string{"dbtest.Main"}, "dbtest"
		case links(p, e2ePkg):
			want, uses = []string{"e2e.RemoveBinary", "dbtest.Main"}, "the e2e harness"
		default:
			continue
		}
		checked++
		calls, err := testMainCalls(p.dir)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if calls == nil {
			t.Errorf("%s: its tests use %s (directly or through a helper) but it has no TestMain; add one that calls %s after m.Run", path, uses, want[0])
			continue
		}
		found := false
		for _, w := range want {
			found = found || calls[w]
		}
		if !found {
			t.Errorf("%s: its TestMain does not call %s", path, strings.Join(want, " or "))
		}
	}
	if checked < 10 {
		t.Errorf("only %d packages use dbtest or the e2e harness: the listing is wrong", checked)
	}
}

// testMainCalls returns the package-qualified calls (dbtest.Main) the TestMain
// among dir's test files makes, or nil when there is none.
func testMainCalls(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Name.Name != "TestMain" || fn.Body == nil {
				continue
			}
			calls := map[string]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok {
							calls[x.Name+"."+sel.Sel.Name] = true
						}
					}
				}
				return true
			})
			return calls, nil
		}
	}
	return nil, nil
}
