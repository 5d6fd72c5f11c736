package server

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"weak"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/scidex/substrate/graph"
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
// the operation and of the variables a price may read: those passed, anywhere
// in an argument's value, to a field that has a price (the only fields whose
// arguments gqlgen's Complexity reads), except identifiers, which no price
// reads (TestNoPriceReadsAnIdentifier). So a mutation's input, which no price
// reads, does not make each request a new key.
// Parsed operations are shared through gqlgen's query cache, so one operation
// object stands for one document's; the cost is keyed by a weak pointer to it,
// which never equals one to another operation (even one allocated where a
// collected one was) and keeps no document alive past gqlgen's cache: 1,000
// remembered costs do not hold 1,000 more documents of up to 2 MiB.
type costLimit struct {
	max int
	es  graphql.ExecutableSchema
	// priced are the names of the fields some type prices (pricedFields):
	// a variable reaches a price only through one of them.
	priced map[string]bool
	costs  *lru.Cache[costKey, int]
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

func newCostLimit(max int, prices graph.ComplexityRoot) *costLimit {
	costs, err := lru.New[costKey, int](costsRemembered)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &costLimit{max: max, priced: pricedFields(prices), costs: costs}
}

// pricedFields are the names of the fields prices has a price for, on any
// type, folded by fieldKey (the Go name of "textDiffs" is TextDiffs). A name
// priced on one type counts on every type: a variable it takes is priced when
// it need not be, which costs a computation and never a wrong cost.
func pricedFields(prices graph.ComplexityRoot) map[string]bool {
	out := map[string]bool{}
	types := reflect.ValueOf(prices)
	for i := range types.NumField() {
		fields := types.Field(i)
		if fields.Kind() != reflect.Struct {
			continue
		}
		for j := range fields.NumField() {
			if f := fields.Field(j); f.Kind() == reflect.Func && !f.IsNil() {
				out[fieldKey(fields.Type().Field(j).Name)] = true
			}
		}
	}
	return out
}

// fieldKey folds a GraphQL field name and gqlgen's Go name for it together.
func fieldKey(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "_", ""))
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
	key, ok := c.costKeyOf(op, vars)
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
func (c *costLimit) costKeyOf(op *ast.OperationDefinition, vars map[string]any) (costKey, bool) {
	var priced map[string]any // most operations price none of their variables
	var reach map[string]bool // the variables priced fields take, found on the first candidate
	for _, d := range op.VariableDefinitions {
		if d.Type.Elem == nil && (d.Type.NamedType == "Ref" || d.Type.NamedType == "ID") {
			continue
		}
		if reach == nil {
			reach = map[string]bool{}
			c.pricedVariables(op.SelectionSet, reach, map[*ast.FragmentDefinition]bool{})
		}
		if !reach[d.Variable] {
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

// pricedVariables adds to out the variables that set passes to priced fields,
// through fragments too (each fragment walked once).
func (c *costLimit) pricedVariables(set ast.SelectionSet, out map[string]bool, walked map[*ast.FragmentDefinition]bool) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if c.priced[fieldKey(s.Name)] {
				for _, a := range s.Arguments {
					variablesIn(a.Value, out)
				}
			}
			c.pricedVariables(s.SelectionSet, out, walked)
		case *ast.InlineFragment:
			c.pricedVariables(s.SelectionSet, out, walked)
		case *ast.FragmentSpread:
			if d := s.Definition; d != nil && !walked[d] {
				walked[d] = true
				c.pricedVariables(d.SelectionSet, out, walked)
			}
		}
	}
}

// variablesIn adds the variables v names, at any depth, to out.
func variablesIn(v *ast.Value, out map[string]bool) {
	if v == nil {
		return
	}
	if v.Kind == ast.Variable {
		out[v.Raw] = true
		return
	}
	for _, ch := range v.Children {
		variablesIn(ch.Value, out)
	}
}
