package main

import (
	"strings"
	"testing"
)

// Functions as gqlgen v0.17.98 writes them, after the split on method heads.
const (
	plainRef = `_Hypothesis_ref(ctx context.Context, field graphql.CollectedField, obj *model.Hypothesis) (ret graphql.Marshaler) {
	return graphql.ResolveField(
		ctx,
		ec.OperationContext,
		field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Hypothesis_ref(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return obj.Ref(), nil
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v string) graphql.Marshaler {
			return ec.marshalNRef2string(ctx, selections, v)
		},
		true,
		true,
	)
}`
	// A resolver: it goes through the resolvers, not the object.
	resolved = `_Hypothesis_signals(ctx context.Context, field graphql.CollectedField, obj *model.Hypothesis) (ret graphql.Marshaler) {
	return graphql.ResolveField(
		ctx,
		ec.OperationContext,
		field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Hypothesis_signals(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			fc := graphql.GetFieldContext(ctx)
			return ec.resolvers.Hypothesis().Signals(ctx, obj, fc.Args["kinds"].([]string))
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v *model.SignalSummary) graphql.Marshaler {
			return ec.marshalNSignalSummary2ᚖgithubᚗcomᚋscidexᚋsubstrateᚋgraphᚋmodelᚐSignalSummary(ctx, selections, v)
		},
		true,
		true,
	)
}`
	object = `_SignalAggregate(ctx context.Context, sel ast.SelectionSet, obj *model.SignalAggregate) graphql.Marshaler {
	fields := graphql.CollectFields(ec.OperationContext, sel, signalAggregateImplementors)

	out := graphql.NewFieldSet(fields)
	deferred := graphql.NewDeferredGroup(ctx)
	return out
}`
	list = `marshalNSignalAggregate2ᚕᚖmodelᚐSignalAggregateᚄ(ctx context.Context, sel ast.SelectionSet, v []*model.SignalAggregate) graphql.Marshaler {
	ret := graphql.MarshalSliceConcurrently(ctx, len(v), 0, false, func(ctx context.Context, i int) graphql.Marshaler {
		return ec.marshalNSignalAggregate2ᚖmodelᚐSignalAggregate(ctx, sel, v[i])
	})
	return ret
}`
)

func TestRewrite(t *testing.T) {
	p := &plugin{
		funcs:   map[string]string{"marshalNSignalAggregate2ᚕᚖmodelᚐSignalAggregateᚄ": "SignalAggregate"},
		scalars: map[string]bool{"marshalNRef2string": true},
	}
	head := "\nfunc (ec *executionContext) "
	src := "package graph\n" + head + plainRef + "\n" + head + resolved + "\n" + head + list + "\n" + head + object + "\n"
	rewritten, direct, groups := map[string]bool{}, 0, 0
	out := string(p.rewriteFile([]byte(src), rewritten, &direct, &groups))

	if want := "_Hypothesis_ref(ctx context.Context, field graphql.CollectedField, obj *model.Hypothesis) (ret graphql.Marshaler) {\n\treturn ec.marshalNRef2string(ctx, field.Selections, obj.Ref())\n}"; !strings.Contains(out, want) {
		t.Errorf("the plain field was not marshalled straight from the object:\n%s", out)
	}
	if !strings.Contains(out, resolved) {
		t.Errorf("the resolver field changed:\n%s", out)
	}
	if !strings.Contains(out, "ret := marshalSliceInOrder(ctx, len(v), 0, false,") || strings.Contains(out, "MarshalSliceConcurrently") {
		t.Errorf("the chosen list is not marshalled in order:\n%s", out)
	}
	if !strings.Contains(out, "deferred := deferredGroup(ctx, fields)") || strings.Contains(out, "NewDeferredGroup") {
		t.Errorf("the object still makes its @defer group every time:\n%s", out)
	}
	if direct != 1 || groups != 1 || !rewritten["SignalAggregate"] {
		t.Errorf("direct %d, groups %d, rewritten %v", direct, groups, rewritten)
	}

	// A plain field of a type that is not a scalar or an enum keeps gqlgen's
	// path: the objects under it need its field context.
	p.scalars = map[string]bool{}
	direct = 0
	if out := string(p.rewriteFile([]byte(head+plainRef), map[string]bool{}, &direct, &groups)); out != head+plainRef || direct != 0 {
		t.Errorf("a field whose marshaller is not a scalar's was rewritten:\n%s", out)
	}
}
