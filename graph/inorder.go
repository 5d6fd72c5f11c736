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
