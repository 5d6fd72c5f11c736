package graph

import (
	"context"
	"io"

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
	// Each element's field context and index, the list's in one allocation
	// each instead of two per element (a field context is ~200 bytes).
	fcs := make([]graphql.FieldContext, length)
	index := make([]int, length)
	for i := range length {
		index[i] = i
		fcs[i].Index = &index[i]
		childCtx := graphql.WithFieldContext(ctx, &fcs[i])
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
	if anyDeferred(fields) {
		return graphql.NewDeferredGroup(ctx)
	}
	return graphql.DeferredGroup{}
}

// anyDeferred reports whether one of an object's fields is under @defer.
func anyDeferred(fields []graphql.CollectedField) bool {
	for i := range fields {
		if fields[i].IsDeferred() {
			return true
		}
	}
	return false
}

// objectValue stands in for the field set an object's marshaller returns
// (cmd/gqlgen puts it there). gqlgen's field set writes each field through an
// iterator that copies the field to the heap, a map of the aliases written so
// far and its string escaper for the alias: three allocations per field and a
// fifth of the Prism page's marshalling. Without a deferred field, the
// object's fields are all resolved when its marshaller returns, and
// object writes them in order; with one, gqlgen's field set is returned, as
// its deferred groups read and empty it.
func objectValue(fields []graphql.CollectedField, out *graphql.FieldSet) graphql.Marshaler {
	if anyDeferred(fields) {
		return out
	}
	return object{fields: fields, values: out.Values}
}

// object is an object's resolved fields, written as gqlgen's field set writes
// them: in order, the first of fields sharing an alias only (field collection
// merges those already; the check costs a few comparisons).
type object struct {
	fields []graphql.CollectedField
	values []graphql.Marshaler
}

func (o object) MarshalGQL(w io.Writer) {
	var seen map[string]bool // for an object of many fields (aliases)
	if len(o.fields) > manyFields {
		seen = make(map[string]bool, len(o.fields))
	}
	sep := `{"`
	for i := range o.fields {
		alias := o.fields[i].Alias
		if seen != nil {
			if seen[alias] {
				continue
			}
			seen[alias] = true
		} else if written(o.fields[:i], alias) {
			continue
		}
		// An alias is a GraphQL name ([_A-Za-z][_0-9A-Za-z]*): nothing to escape.
		_, _ = io.WriteString(w, sep)
		_, _ = io.WriteString(w, alias)
		_, _ = io.WriteString(w, `":`)
		o.values[i].MarshalGQL(w)
		sep = `,"`
	}
	if sep == `{"` {
		_, _ = io.WriteString(w, "{}")
		return
	}
	_, _ = io.WriteString(w, "}")
}

// manyFields is how many fields an object has before looking its aliases up
// in a map is cheaper than comparing each with those before it.
const manyFields = 16

// written reports whether one of before has alias.
func written(before []graphql.CollectedField, alias string) bool {
	for i := range before {
		if before[i].Alias == alias {
			return true
		}
	}
	return false
}

// syncObject stands in for gqlgen's field set in the marshaller of an object
// whose fields all resolve on the calling goroutine (cmd/gqlgen puts it there:
// gqlgen's Object.IsConcurrent is false). Such a marshaller only stores the
// values and counts the invalid ones, and every value is there when it
// returns; the syncObject holds them, written in order as object writes them,
// in one allocation for up to syncFields fields, where gqlgen's field set and
// its values take two and the object written from them a third.
type syncObject struct {
	fields   []graphql.CollectedField
	Values   []graphql.Marshaler
	Invalids uint32
	buf      [syncFields]graphql.Marshaler
}

// syncFields is how many values a syncObject holds in itself (a vote
// summary has 4 fields, a signal aggregate 8).
const syncFields = 8

func newSyncObject(fields []graphql.CollectedField) *syncObject {
	o := &syncObject{fields: fields}
	if len(fields) <= len(o.buf) {
		o.Values = o.buf[:len(fields)]
	} else {
		o.Values = make([]graphql.Marshaler, len(fields))
	}
	return o
}

func (o *syncObject) MarshalGQL(w io.Writer) {
	object{fields: o.fields, values: o.Values}.MarshalGQL(w)
}
