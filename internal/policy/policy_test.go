// Package policy holds repository policy as tests: what every package and the
// module must satisfy, checked on every run.
package policy

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Every package says why it exists in a package doc comment.
func TestEveryPackageHasADocComment(t *testing.T) {
	pkgs := map[string]bool{}
	documented := map[string]bool{}
	_ = filepath.WalkDir(root(t), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.Dir(path)
		pkgs[dir] = true
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
			documented[dir] = true
		}
		return nil
	})
	for dir := range pkgs {
		if !documented[dir] {
			rel, _ := filepath.Rel(root(t), dir)
			t.Errorf("package %s has no package doc comment", rel)
		}
	}
}

// The module builds from the proxy alone: no replace directives.
func TestNoReplaceInGoMod(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "replace") {
			t.Errorf("go.mod has a replace directive: %s", line)
		}
	}
}

// No util, common or helpers packages: a package is named for what it is.
func TestNoGrabBagPackages(t *testing.T) {
	_ = filepath.WalkDir(root(t), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir // other people's code
			}
			switch d.Name() {
			case "util", "utils", "common", "helpers", "pkg", "misc":
				t.Errorf("grab-bag package directory %s", path)
			}
		}
		return nil
	})
}
