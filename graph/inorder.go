package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// marshalSliceInOrder marshals a list's elements one after another on the
// calling goroutine. cmd/gqlgen puts it in place of gqlgen's
// graphql.MarshalSliceConcurrently (same signature, same field contexts, same
// panic handling) for lists whose elements have nothing to batch; see there.
func marshalSliceInOrder(ctx context.Context, length int, _ int64, omitPanicHandler bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler,
) graphql.Array {
	ret := make(graphql.Array, length)
	for i := range length {
		childCtx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &i})
		if omitPanicHandler {
			ret[i] = marshalElement(childCtx, i)
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					graphql.AddError(childCtx, graphql.Recover(childCtx, r))
					ret[i] = graphql.Null
				}
			}()
			ret[i] = marshalElement(childCtx, i)
		}()
	}
	return ret
}

// deferredGroup stands in for graphql.NewDeferredGroup(ctx) in the
// marshaller of an object whose fields are collected (cmd/gqlgen puts it
// there). gqlgen fills a group only with fields under @defer; when the object
// has none, the usual case, the group stays unused and is left empty instead
// of computing the object's response path, a field set and a map for it (14 %
// of the server's CPU on the Prism page).
func deferredGroup(ctx context.Context, fields []graphql.CollectedField) graphql.DeferredGroup {
	for _, f := range fields {
		if f.IsDeferred() {
			return graphql.NewDeferredGroup(ctx)
		}
	}
	return graphql.DeferredGroup{}
}
