package main

import (
	"fmt"
	"sort"

	"github.com/99designs/gqlgen/codegen"
	"github.com/vektah/gqlparser/v2/ast"
)

// prefetched are the edge types whose connections' resolvers load, before the
// edges are marshalled, everything the query asks of their nodes (links,
// comments, signals, calibration, creators, provenance actors). A resolver
// returning one of these must call prefetch; the statement-count tests of
// internal/server check that it does.
var prefetched = []string{"ArtifactEdge", "LinkEdge", "SearchEdge"}

// plan is what the rewrite must change, derived from gqlgen's model of the
// schema, each entry keyed by the name of the generated function (without
// the receiver) that gqlgen writes for it.
type plan struct {
	// direct are the plain scalar fields to marshal straight from the object.
	direct map[string]directField
	// lists are the list marshallers to run in order, by element type.
	lists map[string]string
	// groups are the object marshallers whose @defer group is made lazily,
	// by object type.
	groups map[string]string
	// sync are those of groups whose fields all resolve on the calling
	// goroutine (gqlgen's Object.IsConcurrent is false): their values go in a
	// syncObject instead of gqlgen's field set.
	sync map[string]bool
}

// directField is one field marshalled straight from its object: what gqlgen's
// function for it must read and call for the rewrite to apply.
type directField struct {
	name         string // Object.field
	value        string // the Go expression that reads it: obj.Ref() or obj.Ref
	marshal      string // the marshaller of its type
	fieldContext string // the function making its field context
}

// planner is the gqlgen plugin that derives the plan; gqlgen calls it with
// the data it generates the code from.
type planner struct{ plan *plan }

func (*planner) Name() string { return "rewrite-plan" }

func (p *planner) GenerateCode(data *codegen.Data) error {
	for _, e := range prefetched {
		if data.Objects.ByName(e) == nil {
			return fmt.Errorf("prefetched edge type %s is not in the schema", e)
		}
	}
	pl := derive(data)
	lists := map[string]bool{}
	for _, e := range pl.lists {
		lists[e] = true
	}
	for _, e := range prefetched {
		if !lists[e] {
			return fmt.Errorf("prefetched edge type %s: no list of it to marshal in order", e)
		}
	}
	if len(pl.direct) == 0 || len(pl.groups) == 0 {
		return fmt.Errorf("nothing to rewrite: %d plain fields, %d objects (did gqlgen change its data?)", len(pl.direct), len(pl.groups))
	}
	p.plan = pl
	return nil
}

// derive computes the plan from gqlgen's data.
func derive(data *codegen.Data) *plan {
	pl := &plan{direct: map[string]directField{}, lists: map[string]string{}, groups: map[string]string{}, sync: map[string]bool{}}
	// A directive on the FIELD location makes gqlgen wrap every field in its
	// field middleware, even fields without a directive of their own.
	fieldDirectives := len(data.AllDirectives.LocationDirectives(string(ast.LocationField))) > 0
	for _, obj := range data.Objects {
		if obj.Stream {
			continue // the subscription root streams; it has no field set
		}
		pl.groups["_"+obj.Name] = obj.Name
		if !obj.Root && !obj.IsConcurrent() {
			pl.sync["_"+obj.Name] = true
		}
		for _, f := range obj.Fields {
			if !fieldDirectives && isDirect(obj, f) {
				value := f.GoReceiverName + "." + f.GoFieldName
				if f.IsMethod() {
					value += "()"
				}
				pl.direct["_"+obj.Name+"_"+f.Name] = directField{
					name: obj.Name + "." + f.Name, value: value,
					marshal: f.TypeReference.MarshalFunc(), fieldContext: f.FieldContextFunc(),
				}
			}
		}
	}
	pure := purity(data)
	for _, ref := range data.ReferencedTypes {
		if !ref.IsSlice() || ref.GQL.Elem == nil || ref.Definition == nil || ref.MarshalFunc() == "" {
			continue // not a list, or an input list: nothing to marshal
		}
		// gqlgen marshals lists of scalars in a plain loop already; lists of
		// anything else (enums included) concurrently.
		if ref.Definition.Kind == ast.Scalar {
			continue
		}
		elem := ref.GQL.Name()
		if pure(elem) || contains(prefetched, elem) {
			pl.lists[ref.MarshalFunc()] = elem
		}
	}
	return pl
}

// isDirect reports whether gqlgen resolves a field of an object by reading
// the object alone and can marshal it without anything the generic path
// provides: no resolver, no arguments, no directive, no context, no error,
// no "has" or "ok" check, and a scalar or enum type (or a list of them),
// whose marshaller needs no field context for children.
func isDirect(obj *codegen.Object, f *codegen.Field) bool {
	switch {
	case obj.Root, f.TypeReference == nil, f.TypeReference.Definition == nil:
		return false
	case f.IsResolver, f.IsBatch(), len(f.Args) > 0, f.HasDirectives(), f.HasHaser:
		return false
	case f.GoReceiverName != "obj":
		return false
	case f.IsMethod() && (f.MethodHasContext || !f.NoErr || f.VOkFunc):
		return false
	case !f.IsMethod() && !f.IsVariable():
		return false // a map's entry: gqlgen type-switches on it
	}
	kind := f.TypeReference.Definition.Kind
	return kind == ast.Scalar || kind == ast.Enum
}

// purity reports whether a named type's fields, and those of every type
// reachable from them, are all resolved without a goroutine. Types on a cycle
// count as impure: the answer only has to be safe.
func purity(data *codegen.Data) func(string) bool {
	memo := map[string]bool{}
	var pure func(string) bool
	pure = func(name string) bool {
		if v, ok := memo[name]; ok {
			return v
		}
		memo[name] = false // while visiting
		ok := true
		def := data.Schema.Types[name]
		switch {
		case def == nil:
			ok = false
		case def.Kind == ast.Object:
			obj := data.Objects.ByName(name)
			if obj == nil {
				ok = false
				break
			}
			for _, f := range obj.Fields {
				if f.IsConcurrent() || f.TypeReference == nil || !pure(f.TypeReference.GQL.Name()) {
					ok = false
					break
				}
			}
		case def.Kind == ast.Interface || def.Kind == ast.Union:
			for _, t := range data.Schema.GetPossibleTypes(def) {
				if !pure(t.Name) {
					ok = false
					break
				}
			}
		}
		memo[name] = ok
		return ok
	}
	return pure
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
