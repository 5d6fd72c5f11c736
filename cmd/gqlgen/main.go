// Command gqlgen runs gqlgen's generator (the version go.mod pins) on
// gqlgen.yml, with one change to what it writes: some lists are marshalled
// element after element instead of one goroutine per element.
//
// gqlgen marshals every element of an object list in a goroutine of its own,
// so that resolvers of sibling elements run together and a dataloader can
// batch them. This server does not batch that way where it matters: the
// resolvers of the connections below look ahead and load what their elements
// ask for before the elements are marshalled (resolvers/prefetch.go), and many
// lists hold objects whose fields need no resolver at all. For those lists the
// goroutines buy nothing and cost a fifth of the server's CPU on the Prism
// page (bench/prism): each element's goroutine starts on a small stack and
// grows it, by copying, to hold the page's deep nesting.
//
// A list is marshalled in order when its elements, and everything reachable
// from them, have no field that gqlgen resolves concurrently, or when its
// element type is one of the prefetched edges. It is run by `go generate ./...`; -v shows gqlgen's log and the lists
// chosen.
package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/vektah/gqlparser/v2/ast"
)

// prefetched are the edge types whose connections' resolvers load, before the
// edges are marshalled, everything the query asks of their nodes (links,
// comments, signals, calibration, creators, provenance actors). A resolver
// returning one of these must call prefetch; the statement-count tests of
// internal/server check that it does.
var prefetched = []string{"ArtifactEdge", "LinkEdge", "SearchEdge"}

const (
	concurrent = "graphql.MarshalSliceConcurrently("
	inOrder    = "marshalSliceInOrder(" // graph/inorder.go
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("cmd/gqlgen: ")
	// gqlgen logs its progress through the standard logger; its own command
	// hides that unless asked, and so does this one.
	verbose := len(os.Args) > 1 && os.Args[1] == "-v"
	if !verbose {
		log.SetOutput(io.Discard)
	}
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		fail(err)
	}
	p := &plugin{}
	if err := api.Generate(cfg, api.AddPlugin(p)); err != nil {
		fail(err)
	}
	if err := p.rewrite(cfg.Exec.Dir()); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "cmd/gqlgen:", err)
	os.Exit(1)
}

// plugin learns from gqlgen's model of the schema which list marshallers to
// rewrite; gqlgen calls it before it writes the code.
type plugin struct {
	funcs map[string]string // marshal function -> element type
}

func (*plugin) Name() string { return "inorder" }

func (p *plugin) GenerateCode(data *codegen.Data) error {
	pure := purity(data)
	p.funcs = map[string]string{}
	for _, ref := range data.ReferencedTypes {
		if !ref.IsSlice() || ref.GQL.Elem == nil {
			continue
		}
		elem := ref.GQL.Name()
		if pure(elem) || contains(prefetched, elem) {
			p.funcs[ref.MarshalFunc()] = elem
		}
	}
	for _, e := range prefetched {
		if data.Objects.ByName(e) == nil {
			return fmt.Errorf("prefetched edge type %s is not in the schema", e)
		}
	}
	return nil
}

// purity reports whether a named type's fields, and those of every type
// reachable from them, are all resolved without a goroutine. Types on a cycle
// count as impure: the answer only has to be safe.
func purity(data *codegen.Data) func(string) bool {
	memo := map[string]bool{}
	var pure func(string) bool
	pure = func(name string) bool {
		if v, ok := memo[name]; ok {
			return v
		}
		memo[name] = false // while visiting
		ok := true
		def := data.Schema.Types[name]
		switch {
		case def == nil:
			ok = false
		case def.Kind == ast.Object:
			obj := data.Objects.ByName(name)
			if obj == nil {
				ok = false
				break
			}
			for _, f := range obj.Fields {
				if f.IsConcurrent() || f.TypeReference == nil || !pure(f.TypeReference.GQL.Name()) {
					ok = false
					break
				}
			}
		case def.Kind == ast.Interface || def.Kind == ast.Union:
			for _, t := range data.Schema.GetPossibleTypes(def) {
				if !pure(t.Name) {
					ok = false
					break
				}
			}
		}
		memo[name] = ok
		return ok
	}
	return pure
}

// rewrite replaces gqlgen's concurrent list marshalling in the chosen
// functions of the generated files in dir.
func (p *plugin) rewrite(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.generated.go"))
	if err != nil {
		return err
	}
	rewritten := map[string]bool{} // element types
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		out := p.rewriteFile(src, rewritten)
		if !bytes.Equal(out, src) {
			if err := os.WriteFile(file, out, 0o644); err != nil {
				return err
			}
		}
	}
	for _, e := range prefetched {
		if !rewritten[e] {
			return fmt.Errorf("no list of %s found to marshal in order (did gqlgen change its output?)", e)
		}
	}
	var names []string
	for e := range rewritten {
		names = append(names, e)
	}
	sort.Strings(names)
	log.Printf("lists marshalled in order: %s", strings.Join(names, ", "))
	return nil
}

// rewriteFile rewrites, function by function, the marshallers p chose.
func (p *plugin) rewriteFile(src []byte, rewritten map[string]bool) []byte {
	const head = "\nfunc (ec *executionContext) "
	parts := bytes.Split(src, []byte(head))
	for i := 1; i < len(parts); i++ {
		name, _, _ := bytes.Cut(parts[i], []byte("("))
		elem, ok := p.funcs[string(name)]
		if !ok || !bytes.Contains(parts[i], []byte(concurrent)) {
			continue
		}
		parts[i] = bytes.ReplaceAll(parts[i], []byte(concurrent), []byte(inOrder))
		rewritten[elem] = true
	}
	return bytes.Join(parts, []byte(head))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
