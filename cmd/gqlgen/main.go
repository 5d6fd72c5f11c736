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
// needs its path; it also no longer passes through field middleware
// (graphql.FieldInterceptor), which internal/server therefore refuses unless
// it serves the stock executor.
//
// @defer groups when needed. Each object's marshaller made a group for its
// @defer'd fields, computing the object's response path, every time; it is
// made only when one of the object's fields is deferred (graph/inorder.go).
//
// The changes are made to gqlgen's text, so an upgrade of gqlgen could make
// them match less than before without anyone noticing. They are therefore
// planned first from gqlgen's own model of the schema (codegen.Data: which
// fields have a resolver, arguments, directives, an error, a scalar type; see
// plan.go), and generation fails, naming every function, when the text
// rewrite does not hit exactly the planned set (rewrite.go).
//
// Before rewriting, it copies gqlgen's output as gqlgen wrote it into
// graph/stock (stock.go): the stock executor, which the differential test of
// internal/server runs beside the rewritten one on the same queries.
package main

import (
	"fmt"
	"io"
	"log"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"
)

// stockDir is where gqlgen's unchanged output is copied (see stock.go).
const stockDir = "graph/stock"

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
	if err := clearStock(stockDir); err != nil {
		fail(fmt.Errorf("clear %s: %w", stockDir, err))
	}
	p := &planner{}
	if err := api.Generate(cfg, api.AddPlugin(p)); err != nil {
		fail(err)
	}
	if p.plan == nil {
		fail(fmt.Errorf("gqlgen did not call the planning plugin"))
	}
	if err := writeStock(cfg.Exec, stockDir); err != nil {
		fail(fmt.Errorf("copy the stock executor to %s: %w", stockDir, err))
	}
	if err := rewriteDir(cfg.Exec.Dir(), p.plan); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "cmd/gqlgen:", err)
	os.Exit(1)
}
