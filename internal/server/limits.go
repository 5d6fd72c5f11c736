package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
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
type costLimit struct {
	max int
	es  graphql.ExecutableSchema
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
	cost := complexity.Calculate(ctx, c.es, oc.Operation, oc.Variables)
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
