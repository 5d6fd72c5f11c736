package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/complexity"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/scidex/substrate/graph"
	"github.com/scidex/substrate/resolvers"
)

// costOf is what the complexity limit charges for one operation document.
func costOf(t *testing.T, query string) int {
	t.Helper()
	es := graph.NewExecutableSchema(graph.Config{Complexity: resolvers.Complexity()})
	doc, err := gqlparser.LoadQuery(es.Schema(), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return complexity.Calculate(context.Background(), es, doc.Operations[0], nil)
}

// The same nested selection costs the same per artifact whichever root reaches
// the artifacts: a list root charges it once per item of its page (first, or
// limit for poll, and the default page when absent), a single root once.
// Through search it used to be charged once for a page of 20 (~30k against
// ~3M through artifacts for the same nesting).
func TestEveryRootPricesNestedSelectionAlike(t *testing.T) {
	const (
		heavy = `{ id title content createdBy { id } links(first: 5) { edges { node { predicate to { id title } } } }
		  comments(first: 3) { edges { node { id content } } } history(first: 2) { edges { node { id } } } }`
		light = `{ id }`
	)
	perArtifact := costOf(t, `{ artifact(ref: "hypothesis:x") `+heavy+` }`) - costOf(t, `{ artifact(ref: "hypothesis:x") `+light+` }`)
	if perArtifact < 20 {
		t.Fatalf("the nested selection costs only %d more than { id } on one artifact", perArtifact)
	}
	const ref = `"hypothesis:x"`
	for _, c := range []struct {
		name  string
		query string // SEL stands for the artifact's selection
		items int
	}{
		{"node", `{ node(id: ` + ref + `) { ... on Artifact SEL } }`, 1},
		{"artifacts first 7", `{ artifacts(type: "hypothesis", first: 7) { edges { node SEL } } }`, 7},
		{"artifacts default page", `{ artifacts(type: "hypothesis") { totalCount edges { node SEL } } }`, 20},
		{"search first 7", `{ search(query: "trem2", first: 7) { edges { node { score artifact SEL } } } }`, 7},
		{"search default page", `{ search(query: "trem2") { edges { node { artifact SEL } } } }`, 20},
		{"poll limit 7", `{ poll(limit: 7) { cursor events { type artifact SEL } } }`, 7},
		{"poll default limit", `{ poll { events { artifact SEL } } }`, 100},
		{"mailbox first 7", `{ mailbox(first: 7) { edges { node SEL } } }`, 7},
		{"mailbox default page", `{ mailbox { edges { node SEL } } }`, 20},
		{"replies", `{ artifact(ref: ` + ref + `) { ... on Message { replies(first: 7) { edges { node SEL } } } } }`, 7},
		{"history", `{ artifact(ref: ` + ref + `) { history(first: 7) { edges { node SEL } } } }`, 7},
		{"comments", `{ artifact(ref: ` + ref + `) { comments(first: 7) { edges { node SEL } } } }`, 7},
		{"produced first 7", `{ me { produced(first: 7) { edges { tool node SEL } } } }`, 7},
		{"produced default page", `{ me { produced(via: "pk.nca") { edges { node SEL } } } }`, 20},
		{"links to", `{ artifact(ref: ` + ref + `) { links(first: 7) { edges { node { to SEL } } } } }`, 7},
		{"links from, default page", `{ artifact(ref: ` + ref + `) { links(direction: IN) { edges { node { from SEL } } } } }`, 20},
		{"a generic artifact's history", `{ artifact(ref: ` + ref + `) { ... on GenericArtifact { history(first: 7) { edges { node SEL } } } } }`, 7},
		{"a typed subtype's comments", `{ artifact(ref: ` + ref + `) { ... on Paper { comments(first: 7) { edges { node SEL } } } } }`, 7},
		{"diff", `{ diff(from: ` + ref + `, to: ` + ref + `) { from SEL to SEL } }`, 2},
		{"createArtifact", `mutation { createArtifact(input: {type: "hypothesis", title: "t", content: {}}) { ... on WriteSuccess { artifact SEL } } }`, 1},
		{"batch of 3", `mutation { batch(input: {writes: [{createArtifact: {type: "hypothesis", title: "a", content: {}}}, {createArtifact: {type: "hypothesis", title: "b", content: {}}}, {createArtifact: {type: "hypothesis", title: "c", content: {}}}]}) { committed results { ... on WriteSuccess { artifact SEL } } } }`, 3},
		{"updateArtifact's conflict", `mutation { updateArtifact(input: {ref: ` + ref + `, baseContentHash: "sha256:x", title: "t"}) { ... on VersionConflict { current SEL } } }`, 1},
		{"events subscription", `subscription { events { id artifact SEL } }`, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := costOf(t, strings.ReplaceAll(c.query, "SEL", heavy)) - costOf(t, strings.ReplaceAll(c.query, "SEL", light))
			if want := c.items * perArtifact; got != want {
				t.Errorf("the nested selection adds %d; want %d items × %d = %d\n%s", got, c.items, perArtifact, want, c.query)
			}
		})
	}
}

// listedBy names the list fields priced by the field that returns their
// object, which has the page size: a connection's edges by the connection's
// field (first), a poll's events by poll (limit), a batch's results by batch
// (its writes).
var listedBy = map[string]bool{
	"ArtifactConnection.edges": true,
	"LinkConnection.edges":     true,
	"SearchConnection.edges":   true,
	"ProducedConnection.edges": true,
	"PollResult.events":        true,
	"BatchResult.results":      true,
	"Leaderboard.edges":        true, // by leaderboard(first)
}

// Every list field, every field returning a paged object (a connection, a
// poll result, a batch result) and every JSON field of the executable schema
// has a price, typed artifact subtypes and GenericArtifact included: a field
// without one would cost 1 whatever it returns.
func TestEveryListIsPriced(t *testing.T) {
	es := graph.NewExecutableSchema(graph.Config{Complexity: resolvers.Complexity()})
	s := es.Schema()
	pagedObjects := map[string]bool{}
	for f := range listedBy {
		pagedObjects[strings.Split(f, ".")[0]] = true
	}
	checked := 0
	for name, def := range s.Types {
		if def.Kind != ast.Object || strings.HasPrefix(name, "__") {
			continue
		}
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			key := name + "." + f.Name
			isList := f.Type.Elem != nil
			if !isList && !pagedObjects[f.Type.Name()] && f.Type.Name() != "JSON" {
				continue
			}
			if listedBy[key] {
				continue
			}
			checked++
			if _, ok := es.Complexity(context.Background(), name, f.Name, 1, dummyArgs(s, f.Arguments)); !ok {
				t.Errorf("%s (%s) has no complexity function: price it in resolvers/complexity.go (or cmd/typegen for artifact types)", key, f.Type)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d fields checked: the walk missed the typed subtypes", checked)
	}
}

// dummyArgs gives every argument a value of its type (its default when it has one).
func dummyArgs(s *ast.Schema, defs ast.ArgumentDefinitionList) map[string]any {
	out := map[string]any{}
	for _, a := range defs {
		if a.DefaultValue != nil {
			v, err := a.DefaultValue.Value(nil)
			if err == nil {
				out[a.Name] = v
				continue
			}
		}
		if a.Type.NonNull {
			out[a.Name] = dummyValue(s, a.Type)
		}
	}
	return out
}

func dummyValue(s *ast.Schema, t *ast.Type) any {
	if t.Elem != nil {
		return []any{}
	}
	def := s.Types[t.NamedType]
	switch {
	case def.Kind == ast.Enum:
		return def.EnumValues[0].Name
	case def.Kind == ast.InputObject:
		m := map[string]any{}
		for _, f := range def.Fields {
			if f.Type.NonNull && f.DefaultValue == nil {
				m[f.Name] = dummyValue(s, f.Type)
			}
		}
		return m
	case t.NamedType == "Int":
		return 1
	case t.NamedType == "Float":
		return 1.0
	case t.NamedType == "Boolean":
		return true
	case t.NamedType == "JSON":
		return map[string]any{}
	}
	return fmt.Sprintf("%s:x", strings.ToLower(t.NamedType))
}

// No price reads an identifier (a Ref or an ID, in an argument or in an input
// object's field): the server remembers an operation's cost whatever
// identifiers its variables hold (internal/server/limits.go), so a price that
// read one would be charged for the first artifact asked about.
func TestNoPriceReadsAnIdentifier(t *testing.T) {
	es := graph.NewExecutableSchema(graph.Config{Complexity: resolvers.Complexity()})
	s := es.Schema()
	checked := 0
	for name, def := range s.Types {
		if def.Kind != ast.Object || strings.HasPrefix(name, "__") {
			continue
		}
		for _, f := range def.Fields {
			args := dummyArgs(s, f.Arguments)
			for _, a := range f.Arguments {
				for _, other := range otherIdentifiers(s, a.Type, args[a.Name]) {
					changed := map[string]any{}
					for k, v := range args {
						changed[k] = v
					}
					changed[a.Name] = other
					before, ok1 := es.Complexity(context.Background(), name, f.Name, 7, args)
					after, ok2 := es.Complexity(context.Background(), name, f.Name, 7, changed)
					checked++
					if before != after || ok1 != ok2 {
						t.Errorf("%s.%s(%s) costs %d (%v) with %v and %d (%v) with %v: a price reads an identifier", name, f.Name, a.Name, before, ok1, args[a.Name], after, ok2, other)
					}
				}
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d identifier arguments checked", checked)
	}
}

// otherIdentifiers are the values v of type t takes with one of its
// identifiers (itself, or a field of an input object) changed.
func otherIdentifiers(s *ast.Schema, t *ast.Type, v any) []any {
	if t.Elem != nil {
		return nil
	}
	if t.NamedType == "Ref" || t.NamedType == "ID" {
		return []any{"hypothesis:another-one", "paper:x@3"}
	}
	def := s.Types[t.NamedType]
	m, ok := v.(map[string]any)
	if def == nil || def.Kind != ast.InputObject || !ok {
		return nil
	}
	var out []any
	for _, f := range def.Fields {
		if f.Type.Elem == nil && (f.Type.NamedType == "Ref" || f.Type.NamedType == "ID") {
			changed := map[string]any{}
			for k, x := range m {
				changed[k] = x
			}
			changed[f.Name] = "paper:another-one"
			out = append(out, changed)
		}
	}
	return out
}
