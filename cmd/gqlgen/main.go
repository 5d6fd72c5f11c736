// Command gqlgen runs gqlgen's generator (the version go.mod pins) on
// gqlgen.yml and then makes three changes to the executor it writes, each
// measured on the Prism page (bench/prism, bench/RESULTS.md P1). It is run by
// `go generate ./...`; -v shows gqlgen's log and what was changed.
//
// Lists in order. gqlgen marshals every element of an object list in a
// goroutine of its own, so that resolvers of sibling elements run together
// and a dataloader can batch them. This server batches by looking ahead
// instead: the resolvers of the prefetched connections load what their
// elements ask for before the elements are marshalled (resolvers/prefetch.go).
// For those lists, and for lists whose elements (and everything reachable
// from them) have no field gqlgen resolves concurrently, the goroutines buy
// nothing; they cost a fifth of the server's CPU, each growing its small
// stack by copying to hold the page's nesting. Those lists are marshalled in
// order (graph/inorder.go).
//
// Plain fields straight from the object. A field that reads a struct field
// or calls a method of the object without arguments, directives, resolver or
// error, and whose type is a scalar or an enum (or a list of them), goes
// through gqlgen's generic path: a field context, the middleware chain, a
// recover, the value boxed in an any. That cost more than the value itself,
// and the Prism page has ~900 such fields. Its function now calls the
// marshaller on the object's value. Such a field cannot fail, so no error
// needs its path.
//
// @defer groups when needed. Each object's marshaller made a group for its
// @defer'd fields, computing the object's response path, every time; it is
// made only when one of the object's fields is deferred (graph/inorder.go).
package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/vektah/gqlparser/v2/ast"
	"golang.org/x/tools/imports"
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
	newGroup   = "graphql.NewDeferredGroup(ctx)"
	lazyGroup  = "deferredGroup(ctx, fields)" // graph/inorder.go
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
// rewrite and which marshallers are a scalar's; gqlgen calls it before it
// writes the code.
type plugin struct {
	funcs   map[string]string // marshal function -> element type
	scalars map[string]bool   // marshal functions of scalars, enums and lists of them
}

func (*plugin) Name() string { return "inorder" }

func (p *plugin) GenerateCode(data *codegen.Data) error {
	pure := purity(data)
	p.funcs = map[string]string{}
	p.scalars = map[string]bool{}
	for _, ref := range data.ReferencedTypes {
		if def := data.Schema.Types[ref.GQL.Name()]; def != nil && (def.Kind == ast.Scalar || def.Kind == ast.Enum) {
			p.scalars[ref.MarshalFunc()] = true
		}
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

// rewrite makes the changes described at the top in the generated files in
// dir.
func (p *plugin) rewrite(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.generated.go"))
	if err != nil {
		return err
	}
	rewritten := map[string]bool{} // element types
	direct := 0                    // fields marshalled straight from the object
	groups := 0                    // objects making their @defer group only when needed
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		out := p.rewriteFile(src, rewritten, &direct, &groups)
		if bytes.Equal(out, src) {
			continue
		}
		// The rewritten functions no longer name some types ("time"): drop
		// the imports nothing uses now.
		if out, err = imports.Process(file, out, &imports.Options{Comments: true, TabIndent: true, TabWidth: 8, FormatOnly: false}); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := os.WriteFile(file, out, 0o644); err != nil {
			return err
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
	log.Printf("fields marshalled straight from the object: %d", direct)
	log.Printf("objects making their @defer group only when needed: %d", groups)
	if direct == 0 || groups == 0 {
		return fmt.Errorf("no field to marshal straight from its object or no object's @defer group found (did gqlgen change its output?)")
	}
	return nil
}

// plainField matches gqlgen's function for a field that reads a struct field
// or calls a method of the object without arguments, directives or error;
// it captures the function's signature, the value read and the marshaller.
var plainField = regexp.MustCompile(`^(_[A-Za-z0-9_]+\(ctx context\.Context, field graphql\.CollectedField, obj [^)]+\) \(ret graphql\.Marshaler\)) \{
	return graphql\.ResolveField\(
		ctx,
		ec\.OperationContext,
		field,
		func\(ctx context\.Context, field graphql\.CollectedField\) \(\*graphql\.FieldContext, error\) \{
			return ec\.fieldContext_[A-Za-z0-9_]+\(ctx, field\)
		\},
		func\(ctx context\.Context\) \(any, error\) \{
			return (obj\.[A-Za-z0-9_]+(?:\(\))?), nil
		\},
		nil,
		func\(ctx context\.Context, selections ast\.SelectionSet, v [^\n]+\) graphql\.Marshaler \{
			return ec\.(marshal[^(\s]+)\(ctx, selections, v\)
		\},
		true,
		(?:true|false),
	\)
\}`)

// rewriteFile rewrites, function by function, the marshallers p chose and
// the plain scalar fields.
func (p *plugin) rewriteFile(src []byte, rewritten map[string]bool, direct, groups *int) []byte {
	const head = "\nfunc (ec *executionContext) "
	parts := bytes.Split(src, []byte(head))
	for i := 1; i < len(parts); i++ {
		if m := plainField.FindSubmatchIndex(parts[i]); m != nil && p.scalars[string(parts[i][m[6]:m[7]])] {
			sig, value, marshal := parts[i][m[2]:m[3]], parts[i][m[4]:m[5]], parts[i][m[6]:m[7]]
			body := fmt.Sprintf("%s {\n\treturn ec.%s(ctx, field.Selections, %s)\n}", sig, marshal, value)
			parts[i] = append([]byte(body), parts[i][m[1]:]...)
			*direct++
			continue
		}
		if bytes.Contains(parts[i], []byte(newGroup)) && bytes.Contains(parts[i], []byte("fields := graphql.CollectFields(")) {
			parts[i] = bytes.ReplaceAll(parts[i], []byte(newGroup), []byte(lazyGroup))
			*groups++
		}
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
