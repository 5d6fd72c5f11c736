package mcp

import (
	"math"

	"github.com/vektah/gqlparser/v2/ast"
)

// RefPattern is the JSON Schema pattern of the Ref scalar: `<type>:<id>`,
// optionally pinned to one version with `@sha256:<hex>`.
const RefPattern = `^[a-z][a-z0-9_]*:[^@\s]+(@sha256:[0-9a-f]{64})?$`

// inputSchema derives a tool's input JSON Schema (2020-12) from the
// operation's variables: one property per variable, required when the
// variable is non-null without a default. Each property carries the
// description of the argument or input field the variable fills.
//
// A null is not accepted where GraphQL would take one: leaving the property
// out means the same, and a schema without type unions is easier on agents.
//
// An input object nested in this tool's input that is another listed tool's
// whole input (toolInputs: the input type's name to that tool) is given by
// reference, an object whose description names the tool that lists its
// fields: a batch's writes are add_comment's, create_artifact's… inputs, and
// spelling each out again would double what every client sends its model.
// The server validates them all the same.
func inputSchema(schema *ast.Schema, op *ast.OperationDefinition, doc *ast.QueryDocument, toolInputs map[string]string) map[string]any {
	uses := variableUses(op, doc)
	props := map[string]any{}
	required := []string{}
	in := &inputs{schema: schema, defs: map[string]any{}, toolInputs: toolInputs}
	for _, v := range op.VariableDefinitions {
		s := in.typed(v.Type, map[string]bool{}, 0)
		if u := uses[v.Variable]; u.desc != "" {
			s["description"] = u.desc
		}
		if u := uses[v.Variable]; u.directives != nil {
			bounds(s, u.directives)
		}
		if v.DefaultValue != nil {
			if dv, err := v.DefaultValue.Value(nil); err == nil {
				s["default"] = dv
			}
		}
		props[v.Variable] = s
		if v.Type.NonNull && v.DefaultValue == nil {
			required = append(required, v.Variable)
		}
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	if len(in.defs) > 0 {
		out["$defs"] = in.defs
	}
	return out
}

// inputs builds one tool's input schema.
type inputs struct {
	schema     *ast.Schema
	defs       map[string]any    // recursive input objects, by name
	toolInputs map[string]string // input types given by reference: the tool whose input each is
}

// typed is the schema of an input type, depth input objects below the
// variables. Input objects are written out in place; one that contains
// itself (a recursive filter, say) goes to $defs the second time it is met,
// and is referenced from there.
func (in *inputs) typed(t *ast.Type, open map[string]bool, depth int) map[string]any {
	if t.Elem != nil {
		return map[string]any{"type": "array", "items": in.typed(t.Elem, open, depth)}
	}
	def := in.schema.Types[t.NamedType]
	if def == nil {
		return map[string]any{}
	}
	switch def.Kind {
	case ast.Scalar:
		return scalarInput(def)
	case ast.Enum:
		return enumSchema(def)
	case ast.InputObject:
		if tool, ok := in.toolInputs[def.Name]; ok && depth > 0 {
			return map[string]any{"type": "object", "description": "Fields: " + tool + "'s input."}
		}
		if open[def.Name] {
			if _, done := in.defs[def.Name]; !done {
				in.defs[def.Name] = map[string]any{} // placeholder: stops the recursion
				in.defs[def.Name] = in.object(def, map[string]bool{def.Name: true}, depth)
			}
			return map[string]any{"$ref": "#/$defs/" + def.Name}
		}
		open[def.Name] = true
		defer delete(open, def.Name)
		return in.object(def, open, depth)
	}
	return map[string]any{}
}

func (in *inputs) object(def *ast.Definition, open map[string]bool, depth int) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, f := range def.Fields {
		s := in.typed(f.Type, open, depth+1)
		if _, byRef := in.toolInputs[f.Type.Name()]; byRef && f.Description != "" {
			s["description"] = f.Description + " " + s["description"].(string)
		} else if f.Description != "" {
			s["description"] = f.Description
		}
		bounds(s, f.Directives)
		if f.DefaultValue != nil {
			if dv, err := f.DefaultValue.Value(nil); err == nil {
				s["default"] = dv
			}
		}
		props[f.Name] = s
		if f.Type.NonNull && f.DefaultValue == nil {
			required = append(required, f.Name)
		}
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	if def.Description != "" {
		out["description"] = def.Description
	}
	return out
}

// scalarInput maps a scalar to the JSON values GraphQL accepts for it as a
// variable, with our custom scalars' formats.
func scalarInput(def *ast.Definition) map[string]any {
	switch def.Name {
	case "String", "ID", "Cursor":
		return map[string]any{"type": "string"}
	case "Boolean":
		return map[string]any{"type": "boolean"}
	case "Int":
		return map[string]any{"type": "integer", "minimum": math.MinInt32, "maximum": math.MaxInt32}
	case "Float":
		return map[string]any{"type": "number"}
	case "Ref":
		return map[string]any{"type": "string", "pattern": RefPattern}
	case "DateTime":
		return map[string]any{"type": "string", "format": "date-time"}
	}
	// JSON, and any scalar this mapping does not know: any JSON value.
	return map[string]any{}
}

func enumSchema(def *ast.Definition) map[string]any {
	vals := make([]string, 0, len(def.EnumValues))
	for _, v := range def.EnumValues {
		vals = append(vals, v.Name)
	}
	out := map[string]any{"type": "string", "enum": vals}
	if def.Description != "" {
		out["description"] = def.Description
	}
	return out
}

// bounds narrows an integer schema to the @range of the argument or input
// field it is (the SDL's bounds, which the server enforces).
func bounds(s map[string]any, ds ast.DirectiveList) {
	r := ds.ForName("range")
	if r == nil || s["type"] != "integer" {
		return
	}
	for arg, key := range map[string]string{"min": "minimum", "max": "maximum"} {
		if a := r.Arguments.ForName(arg); a != nil && a.Value != nil {
			if v, err := a.Value.Value(nil); err == nil {
				s[key] = v
			}
		}
	}
}

// use is what a variable is passed as: the argument's or input field's
// description and directives.
type use struct {
	desc       string
	directives ast.DirectiveList
}

// variableUses finds, for each variable, the argument or input field it is
// passed as (the first use that has a description).
func variableUses(op *ast.OperationDefinition, doc *ast.QueryDocument) map[string]use {
	out := map[string]use{}
	var value func(u use, v *ast.Value)
	value = func(u use, v *ast.Value) {
		if v == nil {
			return
		}
		switch v.Kind {
		case ast.Variable:
			if _, ok := out[v.Raw]; !ok && u.desc != "" {
				out[v.Raw] = u
			}
		case ast.ObjectValue:
			for _, c := range v.Children {
				var fu use
				if v.Definition != nil {
					if f := v.Definition.Fields.ForName(c.Name); f != nil {
						fu = use{f.Description, f.Directives}
					}
				}
				value(fu, c.Value)
			}
		case ast.ListValue:
			for _, c := range v.Children {
				value(u, c.Value)
			}
		}
	}
	seen := map[string]bool{}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				for _, a := range s.Arguments {
					var u use
					if s.Definition != nil {
						if ad := s.Definition.Arguments.ForName(a.Name); ad != nil {
							u = use{ad.Description, ad.Directives}
						}
					}
					value(u, a.Value)
				}
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				if !seen[s.Name] {
					seen[s.Name] = true
					if f := doc.Fragments.ForName(s.Name); f != nil {
						walk(f.SelectionSet)
					}
				}
			}
		}
	}
	walk(op.SelectionSet)
	return out
}
