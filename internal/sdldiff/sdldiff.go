// Package sdldiff finds the changes between two GraphQL schemas that break a
// client written against the older one: a type, field, argument, enum value,
// union member or interface removed; a field's or argument's type changed in
// a way an existing query or variable no longer fits; a new required argument
// or input field. Additions that break nothing (a new type, an optional
// argument, a nullable output field becoming non-null) are not reported.
//
// scripts/verify compares the executable schema with the committed baseline
// (graph/baseline.graphql) through cmd/sdlcheck, so a breaking change fails
// review unless the same change updates the baseline on purpose.
package sdldiff

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Change is one breaking change: where, and what happened.
type Change struct {
	Path    string // Type, Type.field, Type.field(arg), Enum.VALUE
	Message string
}

func (c Change) String() string { return c.Path + ": " + c.Message }

// Breaking lists what in next breaks a client of prev, sorted by path.
func Breaking(prev, next *ast.Schema) []Change {
	var out []Change
	add := func(path, format string, args ...any) {
		out = append(out, Change{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	for name, old := range prev.Types {
		if old.BuiltIn {
			continue
		}
		cur := next.Types[name]
		switch {
		case cur == nil:
			add(name, "the %s was removed", kind(old))
			continue
		case cur.Kind != old.Kind:
			add(name, "was a %s, is now a %s", kind(old), kind(cur))
			continue
		}
		switch old.Kind {
		case ast.Object, ast.Interface:
			for _, f := range old.Fields {
				if len(f.Name) > 1 && f.Name[:2] == "__" {
					continue
				}
				nf := cur.Fields.ForName(f.Name)
				if nf == nil {
					add(name+"."+f.Name, "the field was removed")
					continue
				}
				if !outputFits(f.Type, nf.Type) {
					add(name+"."+f.Name, "its type changed from %s to %s", f.Type, nf.Type)
				}
				arguments(name+"."+f.Name, f.Arguments, nf.Arguments, add)
			}
			for _, i := range old.Interfaces {
				if !slices.Contains(cur.Interfaces, i) {
					add(name, "no longer implements %s", i)
				}
			}
		case ast.InputObject:
			for _, f := range old.Fields {
				nf := cur.Fields.ForName(f.Name)
				if nf == nil {
					add(name+"."+f.Name, "the input field was removed")
				} else if !inputFits(f.Type, nf.Type) {
					add(name+"."+f.Name, "its type changed from %s to %s", f.Type, nf.Type)
				}
			}
			for _, nf := range cur.Fields {
				if old.Fields.ForName(nf.Name) == nil && nf.Type.NonNull && nf.DefaultValue == nil {
					add(name+"."+nf.Name, "a new required input field (%s, no default)", nf.Type)
				}
			}
		case ast.Enum:
			for _, v := range old.EnumValues {
				if cur.EnumValues.ForName(v.Name) == nil {
					add(name+"."+v.Name, "the enum value was removed")
				}
			}
		case ast.Union:
			for _, m := range old.Types {
				if !slices.Contains(cur.Types, m) {
					add(name, "the union no longer has the member %s", m)
				}
			}
		}
	}
	for name, d := range prev.Directives {
		if d.Position != nil && d.Position.Src != nil && d.Position.Src.BuiltIn {
			continue
		}
		if next.Directives[name] == nil {
			add("@"+name, "the directive was removed")
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Message < out[j].Message
	})
	return out
}

// arguments reports the breaking changes of a field's arguments.
func arguments(path string, prev, next ast.ArgumentDefinitionList, add func(string, string, ...any)) {
	for _, a := range prev {
		na := next.ForName(a.Name)
		if na == nil {
			add(path+"("+a.Name+")", "the argument was removed")
		} else if !inputFits(a.Type, na.Type) {
			add(path+"("+a.Name+")", "its type changed from %s to %s", a.Type, na.Type)
		}
	}
	for _, na := range next {
		if prev.ForName(na.Name) == nil && na.Type.NonNull && na.DefaultValue == nil {
			add(path+"("+na.Name+")", "a new required argument (%s, no default)", na.Type)
		}
	}
}

// outputFits reports whether a value of type next satisfies a client that
// expects prev: the same named type and list shape, where a non-null may
// replace a nullable (the client handled null; it no longer comes).
func outputFits(prev, next *ast.Type) bool {
	if prev.NonNull && !next.NonNull {
		return false
	}
	if (prev.Elem == nil) != (next.Elem == nil) {
		return false
	}
	if prev.Elem != nil {
		return outputFits(prev.Elem, next.Elem)
	}
	return prev.NamedType == next.NamedType
}

// inputFits reports whether every value a client sent for prev is still
// accepted as next: the same named type and list shape, where a nullable may
// replace a non-null (what was required may now be left out).
func inputFits(prev, next *ast.Type) bool {
	if !prev.NonNull && next.NonNull {
		return false
	}
	if (prev.Elem == nil) != (next.Elem == nil) {
		return false
	}
	if prev.Elem != nil {
		return inputFits(prev.Elem, next.Elem)
	}
	return prev.NamedType == next.NamedType
}

func kind(d *ast.Definition) string {
	switch d.Kind {
	case ast.Object:
		return "type"
	case ast.InputObject:
		return "input"
	}
	return strings.ToLower(string(d.Kind))
}
