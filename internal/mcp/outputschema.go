package mcp

import (
	"encoding/json"
	"sort"

	"github.com/vektah/gqlparser/v2/ast"
)

// outputSchema derives the JSON Schema of an operation's data from its
// selection set: exactly the keys the response has (aliases included), each
// with its field's type and description; nullable fields admit null. A field
// of a union or interface type is one object schema when every possible type
// selects the same fields, else a oneOf of the distinct shapes (anyOf when
// __typename is not selected and so cannot tell them apart).
//
// Only keywords that mean the same in JSON Schema draft-07 and 2020-12 are
// used, and no $schema, so clients that validate structured content with a
// draft-07 validator (ajv's default) accept it too.
//
// The schema is compact, because every client sends tools/list to its model
// whole: it says which keys an answer has and of what type, the shapes a
// union can take by __typename, and nothing the data says of itself —
// no descriptions (the tool's description and input schema carry the
// meaning), no enum lists (a status or an error code is a string whose value
// reads for itself; inputs keep their enums, where a client must choose), no
// required lists (the keys are always present unless skippable), and objects
// below maxOutputDepth are just objects.
func outputSchema(schema *ast.Schema, op *ast.OperationDefinition, doc *ast.QueryDocument) map[string]any {
	root := schema.Query
	if op.Operation == ast.Mutation {
		root = schema.Mutation
	}
	o := &outputs{schema: schema, doc: doc}
	return o.object(root, []ast.SelectionSet{op.SelectionSet}, 0)
}

// maxOutputDepth is how many levels of objects an output schema spells out:
// the data, the root field's value (a union's members), their fields.
const maxOutputDepth = 3

type outputs struct {
	schema *ast.Schema
	doc    *ast.QueryDocument
}

// collected is one response key and the fields that fill it (the same field
// may be selected several times, in different fragments).
type collected struct {
	key       string
	fields    []*ast.Field
	skippable bool // under @skip or @include: the key may be absent
}

// collect is CollectFields of the GraphQL spec for the object type t: the
// response keys, in order, of the selections that apply to t.
func (o *outputs) collect(t *ast.Definition, sets []ast.SelectionSet) []*collected {
	var out []*collected
	index := map[string]*collected{}
	var walk func(set ast.SelectionSet, skippable bool, visited map[string]bool)
	walk = func(set ast.SelectionSet, skippable bool, visited map[string]bool) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				key := s.Alias
				if key == "" {
					key = s.Name
				}
				c := index[key]
				if c == nil {
					c = &collected{key: key, skippable: true}
					index[key] = c
					out = append(out, c)
				}
				c.fields = append(c.fields, s)
				// A key is always present once one selection of it is unconditional.
				c.skippable = c.skippable && (skippable || conditional(s.Directives))
			case *ast.InlineFragment:
				if o.applies(s.TypeCondition, t) {
					walk(s.SelectionSet, skippable || conditional(s.Directives), visited)
				}
			case *ast.FragmentSpread:
				f := o.doc.Fragments.ForName(s.Name)
				if f == nil || visited[s.Name] || !o.applies(f.TypeCondition, t) {
					continue
				}
				visited[s.Name] = true
				walk(f.SelectionSet, skippable || conditional(s.Directives), visited)
			}
		}
	}
	for _, set := range sets {
		walk(set, false, map[string]bool{})
	}
	return out
}

func conditional(ds ast.DirectiveList) bool {
	return ds.ForName("skip") != nil || ds.ForName("include") != nil
}

// applies reports whether a fragment on cond applies to the object type t.
func (o *outputs) applies(cond string, t *ast.Definition) bool {
	if cond == "" || cond == t.Name {
		return true
	}
	for _, p := range o.schema.GetPossibleTypes(o.schema.Types[cond]) {
		if p.Name == t.Name {
			return true
		}
	}
	return false
}

// object is the schema of an object of type t with the given selections, at
// depth levels of objects below the data.
func (o *outputs) object(t *ast.Definition, sets []ast.SelectionSet, depth int) map[string]any {
	if depth >= maxOutputDepth {
		return map[string]any{"type": "object"}
	}
	props := map[string]any{}
	for _, c := range o.collect(t, sets) {
		props[c.key] = o.field(t, c, depth)
	}
	return map[string]any{"type": "object", "properties": props}
}

func (o *outputs) field(parent *ast.Definition, c *collected, depth int) map[string]any {
	name := c.fields[0].Name
	if name == "__typename" {
		return map[string]any{"type": "string", "const": parent.Name}
	}
	def := parent.Fields.ForName(name)
	if def == nil {
		return map[string]any{}
	}
	var subs []ast.SelectionSet
	for _, f := range c.fields {
		subs = append(subs, f.SelectionSet)
	}
	return o.typed(def.Type, subs, depth+1)
}

// typed is the schema of a value of GraphQL type t, at depth.
func (o *outputs) typed(t *ast.Type, subs []ast.SelectionSet, depth int) map[string]any {
	var s map[string]any
	if t.Elem != nil {
		s = map[string]any{"type": "array", "items": o.typed(t.Elem, subs, depth)}
	} else {
		s = o.named(o.schema.Types[t.NamedType], subs, depth)
	}
	if !t.NonNull {
		s = nullable(s)
	}
	return s
}

func (o *outputs) named(def *ast.Definition, subs []ast.SelectionSet, depth int) map[string]any {
	if def == nil {
		return map[string]any{}
	}
	switch def.Kind {
	case ast.Scalar:
		return scalarOutput(def)
	case ast.Enum:
		return map[string]any{"type": "string"}
	case ast.Object:
		return o.object(def, subs, depth)
	case ast.Interface, ast.Union:
		if depth >= maxOutputDepth {
			return map[string]any{"type": "object"}
		}
		return o.abstract(def, subs, depth)
	}
	return map[string]any{}
}

// abstract is the schema of a union or interface value: the possible types
// grouped by the shape their selections give them.
func (o *outputs) abstract(def *ast.Definition, subs []ast.SelectionSet, depth int) map[string]any {
	type group struct {
		names  []string
		schema map[string]any
	}
	var groups []*group
	byShape := map[string]*group{}
	typename := false
	possible := o.schema.GetPossibleTypes(def)
	sort.Slice(possible, func(i, j int) bool { return possible[i].Name < possible[j].Name })
	for _, p := range possible {
		s := o.object(p, subs, depth)
		props := s["properties"].(map[string]any)
		if _, ok := props["__typename"]; ok {
			typename = true
			delete(props, "__typename") // set per group below
		}
		shape, _ := json.Marshal(s)
		g := byShape[string(shape)]
		if g == nil {
			g = &group{schema: s}
			byShape[string(shape)] = g
			groups = append(groups, g)
		}
		g.names = append(g.names, p.Name)
	}
	groups = nest(groups, func(g *group) map[string]any { return g.schema["properties"].(map[string]any) },
		func(into, g *group) { into.names = append(into.names, g.names...); sort.Strings(into.names) })
	if typename {
		for _, g := range groups {
			props := g.schema["properties"].(map[string]any)
			if len(g.names) == 1 {
				props["__typename"] = map[string]any{"type": "string", "const": g.names[0]}
			} else {
				props["__typename"] = map[string]any{"type": "string", "enum": g.names}
			}
		}
	}
	if len(groups) == 1 {
		return groups[0].schema
	}
	members := make([]any, len(groups))
	for i, g := range groups {
		members[i] = g.schema
	}
	if typename {
		return map[string]any{"oneOf": members}
	}
	return map[string]any{"anyOf": members}
}

// nest folds each shape whose keys are some of another's, each with the same
// schema, into that one: without required lists the larger shape admits the
// smaller's objects already, so a mutation's errors (every Problem selects
// code and message; ValidationFailed adds its problems) list as one shape of
// many names rather than one per selection, and only what tells them apart
// by keys stays apart (a WriteSuccess).
func nest[G any](groups []G, props func(G) map[string]any, merge func(into, g G)) []G {
	contains := func(big, small map[string]any) bool {
		if len(small) >= len(big) {
			return false
		}
		for k, v := range small {
			w, ok := big[k]
			if !ok {
				return false
			}
			a, _ := json.Marshal(v)
			b, _ := json.Marshal(w)
			if string(a) != string(b) {
				return false
			}
		}
		return true
	}
	var out []G
	for i, g := range groups {
		into := -1
		for j, h := range groups {
			// The largest container, so that a chain of nested shapes folds whole.
			if j != i && contains(props(h), props(g)) && (into < 0 || len(props(h)) > len(props(groups[into]))) {
				into = j
			}
		}
		if into < 0 {
			out = append(out, g)
			continue
		}
		merge(groups[into], g)
	}
	return out
}

// scalarOutput maps a scalar to the JSON the server writes for it.
func scalarOutput(def *ast.Definition) map[string]any {
	switch def.Name {
	case "String", "ID", "Cursor", "Ref":
		return map[string]any{"type": "string"}
	case "Boolean":
		return map[string]any{"type": "boolean"}
	case "Int":
		return map[string]any{"type": "integer"}
	case "Float":
		return map[string]any{"type": "number"}
	case "DateTime":
		return map[string]any{"type": "string", "format": "date-time"}
	}
	return map[string]any{}
}

// nullable widens s to admit null.
func nullable(s map[string]any) map[string]any {
	if len(s) == 0 {
		return s // any value, null included
	}
	if t, ok := s["type"].(string); ok {
		s["type"] = []string{t, "null"}
		if e, ok := s["enum"].([]string); ok {
			vals := make([]any, 0, len(e)+1)
			for _, v := range e {
				vals = append(vals, v)
			}
			s["enum"] = append(vals, nil)
		}
		return s
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if m, ok := s[k].([]any); ok {
			s[k] = append(m, map[string]any{"type": "null"})
			return s
		}
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}
