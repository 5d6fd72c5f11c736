// Command sdlcheck holds the GraphQL schema to its committed baseline,
// graph/baseline.graphql, so that a change clients would notice is made on
// purpose and shows in review: it fails, listing each change, when the
// executable schema breaks a client of the baseline (internal/sdldiff), and
// when the baseline is merely out of date. -update rewrites the baseline to
// the schema as it is; commit it with the change that made it differ.
//
//	go run ./cmd/sdlcheck           # scripts/verify runs this
//	go run ./cmd/sdlcheck -update   # after a schema change, breaking or not
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/scidex/substrate/graph"
	"github.com/scidex/substrate/internal/sdldiff"
)

// Baseline is the committed schema, relative to the module root.
const Baseline = "graph/baseline.graphql"

func main() {
	update := flag.Bool("update", false, "rewrite "+Baseline+" to the schema as it is")
	flag.Parse()
	if err := run(*update); err != nil {
		fmt.Fprintln(os.Stderr, "sdlcheck:", err)
		os.Exit(1)
	}
}

func run(update bool) error {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	var b bytes.Buffer
	formatter.NewFormatter(&b).FormatSchema(schema)
	current := b.Bytes()
	if update {
		return os.WriteFile(Baseline, current, 0o644)
	}
	prev, err := os.ReadFile(Baseline)
	if err != nil {
		return fmt.Errorf("%w (create it with go run ./cmd/sdlcheck -update)", err)
	}
	if bytes.Equal(prev, current) {
		return nil
	}
	old, gqlErr := gqlparser.LoadSchema(&ast.Source{Name: Baseline, Input: string(prev)})
	if gqlErr != nil {
		return fmt.Errorf("%s does not load: %v", Baseline, gqlErr)
	}
	if changes := sdldiff.Breaking(old, schema); len(changes) > 0 {
		var msg bytes.Buffer
		fmt.Fprintf(&msg, "the schema breaks clients of %s in %d ways:\n", Baseline, len(changes))
		for _, c := range changes {
			fmt.Fprintf(&msg, "  %s\n", c)
		}
		msg.WriteString("if that is intended (a breaking change the clients are told of), run go run ./cmd/sdlcheck -update and commit the baseline with the change")
		return fmt.Errorf("%s", msg.String())
	}
	return fmt.Errorf("%s is out of date with the schema (no breaking change): run go run ./cmd/sdlcheck -update and commit it with the change", Baseline)
}
