package server

import (
	"context"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/scidex/substrate/graph"
	"github.com/scidex/substrate/resolvers"
)

// A remembered cost is keyed by the variables a price may read and no others:
// a mutation's input (which no price reads) does not make every request a new
// key, while a page size reaches its price through a fragment, an input
// object's field or a list, and changes the cost it is remembered with.
func TestCostKeyHoldsTheVariablesAPriceReads(t *testing.T) {
	prices := resolvers.Complexity()
	es := graph.NewExecutableSchema(graph.Config{Complexity: prices})
	c := newCostLimit(1<<40, prices)
	if err := c.Validate(es); err != nil {
		t.Fatal(err)
	}
	op := func(q string) *ast.OperationDefinition {
		t.Helper()
		doc, err := gqlparser.LoadQuery(es.Schema(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return doc.Operations[0]
	}
	ctx := context.Background()

	create := op(`mutation($in: CreateArtifactInput!) { createArtifact(input: $in) { __typename } }`)
	k1, ok1 := c.costKeyOf(create, map[string]any{"in": map[string]any{"type": "hypothesis", "title": "one", "idempotencyKey": "a"}})
	k2, ok2 := c.costKeyOf(create, map[string]any{"in": map[string]any{"type": "hypothesis", "title": "two", "idempotencyKey": "b"}})
	if !ok1 || !ok2 || k1 != k2 || k1.vars != "" {
		t.Errorf("two creates: keys %+v (%v) and %+v (%v), want one key with no variables", k1, ok1, k2, ok2)
	}

	for _, q := range []string{
		// a page size through a fragment
		`query($ref: Ref!, $n: Int) { artifact(ref: $ref) { ...F } } fragment F on Hypothesis { links(first: $n) { edges { cursor } } }`,
		// through a fragment inside an inline fragment, next to an unpriced field's argument
		`query($ref: Ref!, $n: Int, $t: String!) { artifact(ref: $ref) { ... on Hypothesis { ...F } } skill(name: $t) { __typename } }
		 fragment F on Hypothesis { comments(first: $n) { edges { cursor } } }`,
	} {
		o := op(q)
		small := map[string]any{"ref": "hypothesis:x", "n": 1, "t": "a"}
		large := map[string]any{"ref": "hypothesis:y", "n": 50, "t": "b"}
		ks, _ := c.costKeyOf(o, small)
		kl, _ := c.costKeyOf(o, large)
		if ks == kl || ks.vars != `{"n":1}` || kl.vars != `{"n":50}` {
			t.Errorf("%s: keys %q and %q, want only n in each", q, ks.vars, kl.vars)
		}
		if cs, cl := c.cost(ctx, o, small), c.cost(ctx, o, large); cs >= cl {
			t.Errorf("%s: first 1 costs %d, first 50 costs %d", q, cs, cl)
		}
	}

	// a list inside an input object's field: batch is priced by its writes
	batch := op(`mutation($w: [WriteInput!]!, $key: String) { batch(input: {writes: $w, idempotencyKey: $key}) { __typename } }`)
	one := map[string]any{"w": []any{map[string]any{}}, "key": "k"}
	many := map[string]any{"w": []any{map[string]any{}, map[string]any{}, map[string]any{}}, "key": "k"}
	if c1, c3 := c.cost(ctx, batch, one), c.cost(ctx, batch, many); c1 >= c3 {
		t.Errorf("a batch of 1 write costs %d, of 3 writes %d", c1, c3)
	}
}

// Every field the cost model prices is found by its GraphQL name: a price
// whose field the key did not recognise would read variables the key leaves
// out, and a remembered cost would outlive the page size it was computed for.
func TestEveryPriceNamesASchemaField(t *testing.T) {
	prices := resolvers.Complexity()
	es := graph.NewExecutableSchema(graph.Config{Complexity: prices})
	fields := map[string]bool{}
	for _, def := range es.Schema().Types {
		for _, f := range def.Fields {
			fields[fieldKey(f.Name)] = true
		}
	}
	priced := pricedFields(prices)
	if len(priced) < 30 {
		t.Fatalf("only %d priced fields found: %v", len(priced), priced)
	}
	for name := range priced {
		if !fields[name] {
			t.Errorf("price %q names no field of the schema", name)
		}
	}
	for _, want := range []string{"links", "batch", "poll", "textdiffs"} {
		if !priced[want] {
			t.Errorf("%q is priced (resolvers/complexity.go) but not found", want)
		}
	}
}
