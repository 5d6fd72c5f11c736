package main

import (
	"os"
	"path/filepath"
	"regexp"
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
	// An object all of whose fields resolve in line, as gqlgen writes it.
	syncObj = `_VoteSummary(ctx context.Context, sel ast.SelectionSet, obj *model.VoteSummary) graphql.Marshaler {
	fields := graphql.CollectFields(ec.OperationContext, sel, voteSummaryImplementors)

	out := graphql.NewFieldSet(fields)
	deferred := graphql.NewDeferredGroup(ctx)
	for i, field := range fields {
		switch field.Name {
		case "score":
			out.Values[i] = ec._VoteSummary_score(ctx, field, obj)
			if out.Values[i] == graphql.Null {
				out.Invalids++
			}
		}
	}
	out.Dispatch(ctx)
	if out.Invalids > 0 {
		return graphql.Null
	}
	return out
}`
	list = `marshalNSignalAggregate2ᚕᚖmodelᚐSignalAggregateᚄ(ctx context.Context, sel ast.SelectionSet, v []*model.SignalAggregate) graphql.Marshaler {
	ret := graphql.MarshalSliceConcurrently(ctx, len(v), 0, false, func(ctx context.Context, i int) graphql.Marshaler {
		return ec.marshalNSignalAggregate2ᚖmodelᚐSignalAggregate(ctx, sel, v[i])
	})
	return ret
}`
)

const listFunc = "marshalNSignalAggregate2ᚕᚖmodelᚐSignalAggregateᚄ"

// snippetPlan is what gqlgen's data says of the snippets above.
func snippetPlan() *plan {
	return &plan{
		direct: map[string]directField{"_Hypothesis_ref": {name: "Hypothesis.ref", value: "obj.Ref()", marshal: "marshalNRef2string", fieldContext: "fieldContext_Hypothesis_ref"}},
		lists:  map[string]string{listFunc: "SignalAggregate"},
		groups: map[string]string{"_SignalAggregate": "SignalAggregate"},
	}
}

func snippets(fns ...string) []byte {
	return []byte("package graph\n" + funcHead + strings.Join(fns, "\n"+funcHead) + "\n")
}

func TestRewriteFollowsThePlan(t *testing.T) {
	h := newHits()
	out := string(rewriteFile(snippets(plainRef, resolved, list, object), snippetPlan(), h))
	if err := check(snippetPlan(), h); err != nil {
		t.Fatal(err)
	}
	if want := "_Hypothesis_ref(ctx context.Context, field graphql.CollectedField, obj *model.Hypothesis) (ret graphql.Marshaler) {\n\treturn ec.marshalNRef2string(ctx, field.Selections, obj.Ref())\n}"; !strings.Contains(out, want) {
		t.Errorf("the plain field was not marshalled straight from the object:\n%s", out)
	}
	if !strings.Contains(out, resolved) {
		t.Errorf("the resolver field changed:\n%s", out)
	}
	if !strings.Contains(out, "ret := marshalSliceInOrder(ctx, len(v), 0, false,") || strings.Contains(out, "MarshalSliceConcurrently") {
		t.Errorf("the planned list is not marshalled in order:\n%s", out)
	}
	if !strings.Contains(out, "deferred := deferredGroup(ctx, fields)") || strings.Contains(out, "NewDeferredGroup") {
		t.Errorf("the object still makes its @defer group every time:\n%s", out)
	}
	if !strings.Contains(out, "\treturn objectValue(fields, out)\n}") || strings.Contains(out, "\treturn out\n") {
		t.Errorf("the object is still written by gqlgen's field set:\n%s", out)
	}

	// A field in the right shape that the plan leaves out (its type is not a
	// scalar or an enum, say) keeps gqlgen's path.
	pl := snippetPlan()
	delete(pl.direct, "_Hypothesis_ref")
	if out := string(rewriteFile(snippets(plainRef), pl, newHits())); out != string(snippets(plainRef)) {
		t.Errorf("a field outside the plan was rewritten:\n%s", out)
	}
}

// An object whose fields all resolve in line keeps its values in a
// syncObject, returned as it is: no field set, nothing to dispatch.
func TestSyncObjectsTakeNoFieldSet(t *testing.T) {
	pl := snippetPlan()
	pl.groups["_VoteSummary"] = "VoteSummary"
	pl.sync = map[string]bool{"_VoteSummary": true}
	h := newHits()
	out := string(rewriteFile(snippets(plainRef, list, object, syncObj), pl, h))
	if err := check(pl, h); err != nil {
		t.Fatal(err)
	}
	_, vote, _ := strings.Cut(out, "_VoteSummary(")
	if !strings.Contains(vote, "out := newSyncObject(fields)") || strings.Contains(vote, "NewFieldSet") || strings.Contains(vote, "Dispatch") ||
		!strings.Contains(vote, "deferredGroup(ctx, fields)") || !strings.HasSuffix(strings.TrimSpace(vote), "return out\n}") {
		t.Errorf("the in-line object was not given a syncObject:\n%s", vote)
	}
	if _, agg, _ := strings.Cut(out, "_SignalAggregate("); !strings.Contains(agg, "return objectValue(fields, out)") {
		t.Errorf("an object the plan does not call in-line lost its field set:\n%s", agg)
	}
}

// When gqlgen's text and its data disagree, generation fails and names every
// function that did not match, instead of rewriting fewer of them.
func TestMismatchFailsGeneration(t *testing.T) {
	for _, c := range []struct {
		name string
		src  []byte
		plan func(*plan)
		want []string
	}{
		{
			name: "a planned field written another way",
			src:  snippets(strings.Replace(plainRef, "return obj.Ref(), nil", "v := obj.Ref()\n\t\t\treturn v, nil", 1), list, object),
			want: []string{"field Hypothesis.ref (_Hypothesis_ref): not found in the shape"},
		},
		{
			name: "a planned field reading something else",
			src:  snippets(strings.Replace(plainRef, "obj.Ref()", "obj.ID()", 1), list, object),
			want: []string{"field Hypothesis.ref (_Hypothesis_ref): gqlgen reads obj.ID()", "not found in the shape"},
		},
		{
			name: "a planned field marshalled with another marshaller",
			src:  snippets(strings.Replace(plainRef, "marshalNRef2string", "marshalNString2string", 1), list, object),
			want: []string{"field Hypothesis.ref (_Hypothesis_ref): gqlgen reads obj.Ref(), marshals with marshalNString2string"},
		},
		{
			name: "a planned field gqlgen did not write",
			src:  snippets(list, object),
			want: []string{"field Hypothesis.ref (_Hypothesis_ref): not found"},
		},
		{
			name: "a planned list marshalled another way",
			src:  snippets(plainRef, strings.Replace(list, "graphql.MarshalSliceConcurrently(", "graphql.MarshalSlice(", 1), object),
			want: []string{"list " + listFunc + " of SignalAggregate: no graphql.MarshalSliceConcurrently"},
		},
		{
			name: "an object without its @defer group",
			src:  snippets(plainRef, list, strings.Replace(object, "graphql.NewDeferredGroup(ctx)", "graphql.DeferredGroup{}", 1)),
			want: []string{"object SignalAggregate (_SignalAggregate): no graphql.NewDeferredGroup(ctx)"},
		},
		{
			name: "an object returning its field set another way",
			src:  snippets(plainRef, list, strings.Replace(object, "return out", "return graphql.Marshaler(out)", 1)),
			want: []string{`object SignalAggregate (_SignalAggregate): not one "return out" at its end`},
		},
		{
			name: "an @defer group the plan does not know",
			src:  snippets(plainRef, list, object, strings.Replace(object, "_SignalAggregate(", "_Unplanned(", 1)),
			want: []string{"function _Unplanned makes an @defer group but is not the marshaller of an object the plan knows"},
		},
		{
			name: "an in-line object resolving a field concurrently",
			src: snippets(plainRef, list, object, strings.Replace(syncObj, "out.Values[i] = ec._VoteSummary_score(ctx, field, obj)",
				"out.Concurrently(i, func(ctx context.Context) graphql.Marshaler { return ec._VoteSummary_score(ctx, field, obj) })", 1)),
			plan: func(pl *plan) {
				pl.groups["_VoteSummary"] = "VoteSummary"
				pl.sync = map[string]bool{"_VoteSummary": true}
			},
			want: []string{"object VoteSummary (_VoteSummary) resolves every field in line, but uses its field set's Concurrently"},
		},
		{
			name: "the data adds a field the text rewrite does not reach",
			src:  snippets(plainRef, list, object),
			plan: func(pl *plan) {
				pl.direct["_Hypothesis_title"] = directField{name: "Hypothesis.title", value: "obj.Title()", marshal: "marshalNString2string", fieldContext: "fieldContext_Hypothesis_title"}
			},
			want: []string{"field Hypothesis.title (_Hypothesis_title): not found"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			pl := snippetPlan()
			if c.plan != nil {
				c.plan(pl)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "x.generated.go"), c.src, 0o644); err != nil {
				t.Fatal(err)
			}
			err := rewriteDir(dir, pl)
			if err == nil {
				t.Fatal("generation succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// On gqlgen's real output (the stock copy in graph/stock), the rewrite hits a
// plan for that file exactly, and one doctored function fails it.
func TestRewriteOfGqlgensOutput(t *testing.T) {
	src, err := os.ReadFile("../../graph/stock/problem.generated.go")
	if err != nil {
		t.Fatal(err)
	}
	src = []byte(strings.Replace(string(src), "\npackage stock\n", "\npackage graph\n", 1))
	pl := &plan{
		direct: map[string]directField{
			"_ValidationProblem_path":       {name: "ValidationProblem.path", value: "obj.Path", marshal: "marshalNString2string", fieldContext: "fieldContext_ValidationProblem_path"},
			"_ValidationProblem_constraint": {name: "ValidationProblem.constraint", value: "obj.Constraint", marshal: "marshalNString2string", fieldContext: "fieldContext_ValidationProblem_constraint"},
		},
		lists:  map[string]string{"marshalNValidationProblem2ᚕᚖgithubᚗcomᚋscidexᚋsubstrateᚋgraphᚋmodelᚐValidationProblemᚄ": "ValidationProblem"},
		groups: map[string]string{},
	}
	for _, m := range regexp.MustCompile(`\nfunc \(ec \*executionContext\) (_([A-Za-z]+))\(ctx context\.Context, sel ast\.SelectionSet[^\n]*\n\tfields := graphql\.CollectFields`).FindAllStringSubmatch(string(src), -1) {
		pl.groups[m[1]] = m[2]
	}
	run := func(src []byte) (string, error) {
		dir := t.TempDir()
		file := filepath.Join(dir, "problem.generated.go")
		if err := os.WriteFile(file, src, 0o644); err != nil {
			t.Fatal(err)
		}
		err := rewriteDir(dir, pl)
		out, _ := os.ReadFile(file)
		return string(out), err
	}
	out, err := run(src)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "return ec.marshalNString2string(ctx, field.Selections, obj.Path)") {
		t.Errorf("ValidationProblem.path is not marshalled straight from the object")
	}
	doctored := strings.Replace(string(src), "\t\t\treturn obj.Constraint, nil\n", "\t\t\treturn obj.Constraint, nil // an upgrade's comment\n", 1)
	if _, err := run([]byte(doctored)); err == nil || !strings.Contains(err.Error(), "field ValidationProblem.constraint (_ValidationProblem_constraint)") {
		t.Errorf("a doctored function did not fail generation: %v", err)
	}
}
