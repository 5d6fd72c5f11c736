package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"weak"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/resolvers"
)

// depthLimit refuses queries whose selections nest deeper than max. Introspection
// fields are not counted: GraphiQL's schema query is deep by design and cheap.
type depthLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = depthLimit{}

func (depthLimit) ExtensionName() string                   { return "DepthLimit" }
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (d depthLimit) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	depth := selectionDepth(oc.Operation.SelectionSet, oc.Doc.Fragments, map[string]bool{})
	if depth > d.max {
		return &gqlerror.Error{
			Message:    fmt.Sprintf("the query nests %d levels deep; the limit is %d", depth, d.max),
			Extensions: map[string]any{"code": string(problem.ValidationFailed), "reason": "DEPTH_LIMIT_EXCEEDED"},
		}
	}
	return nil
}

func selectionDepth(set ast.SelectionSet, frags ast.FragmentDefinitionList, seen map[string]bool) int {
	max := 0
	for _, sel := range set {
		d := 0
		switch s := sel.(type) {
		case *ast.Field:
			if strings.HasPrefix(s.Name, "__") {
				continue
			}
			d = 1 + selectionDepth(s.SelectionSet, frags, seen)
		case *ast.InlineFragment:
			d = selectionDepth(s.SelectionSet, frags, seen)
		case *ast.FragmentSpread:
			if seen[s.Name] {
				continue // a cycle; validation reports it
			}
			if f := frags.ForName(s.Name); f != nil {
				seen[s.Name] = true
				d = selectionDepth(f.SelectionSet, frags, seen)
				delete(seen, s.Name)
			}
		}
		if d > max {
			max = d
		}
	}
	return max
}

// costLimit refuses operations that cost more than max by the schema's cost
// model (resolvers/complexity.go), with a message that says how to ask for less.
// It stands in for gqlgen's FixedComplexityLimit, whose message names neither
// the flag nor the way out.
//
// An operation's cost is remembered: computing it walks every implementor of
// every interface the operation selects (the Prism page's link targets: 26
// types), 12 % of the server's CPU on that page. The cost is a function of
// the operation and of the variables a price may read, which are all of them
// except identifiers: no price reads a Ref or an ID (TestNoPriceReadsAnIdentifier).
// Parsed operations are shared through gqlgen's query cache, so one operation
// object stands for one document's; the cost is keyed by a weak pointer to it,
// which never equals one to another operation (even one allocated where a
// collected one was) and keeps no document alive past gqlgen's cache: 1,000
// remembered costs do not hold 1,000 more documents of up to 2 MiB.
type costLimit struct {
	max   int
	es    graphql.ExecutableSchema
	costs *lru.Cache[costKey, int]
}

// costKey is what an operation's cost depends on.
type costKey struct {
	op weak.Pointer[ast.OperationDefinition]
	// vars are the operation's priced variables (all but identifiers) as JSON.
	vars string
}

// costsRemembered is how many operations' costs are kept: as many as the
// query cache keeps documents.
const costsRemembered = 1000

func newCostLimit(max int) *costLimit {
	costs, err := lru.New[costKey, int](costsRemembered)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &costLimit{max: max, costs: costs}
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = (*costLimit)(nil)

func (*costLimit) ExtensionName() string { return "CostLimit" }

func (c *costLimit) Validate(es graphql.ExecutableSchema) error {
	c.es = es
	return nil
}

func (c *costLimit) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	cost := c.cost(ctx, oc.Operation, oc.Variables)
	if cost <= c.max {
		return nil
	}
	return &gqlerror.Error{
		Message: fmt.Sprintf("the query costs %d, more than the limit of %d (--max-complexity): a list costs its page size "+
			"(first, or poll's limit; %d when absent) times what each item asks for, and a JSON value %d; "+
			"ask for smaller pages or fewer fields, or split the query", cost, c.max, store.DefaultPageSize, resolvers.JSONWeight),
		Extensions: map[string]any{"code": string(problem.ValidationFailed), "reason": "COMPLEXITY_LIMIT_EXCEEDED", "cost": cost, "limit": c.max},
	}
}

// cost is what op costs with vars, computed once per operation and priced
// variables' values.
func (c *costLimit) cost(ctx context.Context, op *ast.OperationDefinition, vars map[string]any) int {
	key, ok := costKeyOf(op, vars)
	if !ok {
		return complexity.Calculate(ctx, c.es, op, vars)
	}
	if cost, ok := c.costs.Get(key); ok {
		return cost
	}
	cost := complexity.Calculate(ctx, c.es, op, vars)
	c.costs.Add(key, cost)
	return cost
}

// costKeyOf is op's cost key with vars, false when the variables cannot be
// written as JSON (they came from JSON, so never).
func costKeyOf(op *ast.OperationDefinition, vars map[string]any) (costKey, bool) {
	var priced map[string]any // most operations price none of their variables
	for _, d := range op.VariableDefinitions {
		if d.Type.Elem == nil && (d.Type.NamedType == "Ref" || d.Type.NamedType == "ID") {
			continue
		}
		if v, ok := vars[d.Variable]; ok {
			if priced == nil {
				priced = map[string]any{}
			}
			priced[d.Variable] = v
		}
	}
	if len(priced) == 0 {
		return costKey{op: weak.Make(op)}, true
	}
	b, err := json.Marshal(priced) // a map's keys in order: one text per value
	if err != nil {
		return costKey{}, false
	}
	return costKey{op: weak.Make(op), vars: string(b)}, true
}
