package sdldiff_test

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/scidex/substrate/internal/sdldiff"
)

const base = `
directive @range(min: Int, max: Int) on ARGUMENT_DEFINITION
interface Node { id: ID! }
type Query { artifact(ref: String!, first: Int): Artifact  list(after: String): [Artifact!]! }
type Artifact implements Node { id: ID! title: String  status: Status! }
enum Status { DRAFT ACTIVE }
input Filter { type: String  limit: Int! }
union Result = Artifact | Problem
type Problem { message: String! }
`

func load(t *testing.T, sdl string) *ast.Schema {
	t.Helper()
	s, err := gqlparser.LoadSchema(&ast.Source{Name: "t", Input: sdl})
	if err != nil {
		t.Fatalf("%v\n%s", err, sdl)
	}
	return s
}

// Each breaking change is found and named; what breaks no client is not.
func TestBreaking(t *testing.T) {
	for _, tt := range []struct {
		name, from, to string
		want           string // "" for no breaking change
	}{
		{"unchanged", "", "", ""},
		{"a new type", "", "type Other { x: Int }", ""},
		{"a new optional argument", "artifact(ref: String!, first: Int)", "artifact(ref: String!, first: Int, mode: String)", ""},
		{"a new argument with a default", "artifact(ref: String!, first: Int)", "artifact(ref: String!, first: Int, n: Int! = 3)", ""},
		{"a nullable output made non-null", "title: String ", "title: String! ", ""},
		{"a required argument made optional", "artifact(ref: String!,", "artifact(ref: String,", ""},
		{"a new enum value", "DRAFT ACTIVE", "DRAFT ACTIVE ARCHIVED", ""},
		{"a field removed", "title: String ", "", "Artifact.title: the field was removed"},
		{"a type removed", "union Result = Artifact | Problem\ntype Problem { message: String! }", "union Result = Artifact", "Problem: the type was removed"},
		{"an output made nullable", "status: Status!", "status: Status", "Artifact.status: its type changed from Status! to Status"},
		{"a list made a value", "[Artifact!]!", "Artifact!", "Query.list: its type changed"},
		{"an argument removed", "list(after: String)", "list", "Query.list(after): the argument was removed"},
		{"a new required argument", "list(after: String)", "list(after: String, type: String!)", "Query.list(type): a new required argument"},
		{"an optional argument made required", "first: Int)", "first: Int!)", "Query.artifact(first): its type changed from Int to Int!"},
		{"an enum value removed", "DRAFT ACTIVE", "ACTIVE", "Status.DRAFT: the enum value was removed"},
		{"a union member removed", "Artifact | Problem", "Artifact", "Result: the union no longer has the member Problem"},
		{"an interface dropped", "implements Node ", "", "Artifact: no longer implements Node"},
		{"an input field removed", "type: String  limit", "limit", "Filter.type: the input field was removed"},
		{"a new required input field", "limit: Int! }", "limit: Int! owner: String! }", "Filter.owner: a new required input field"},
		{"a kind changed", "enum Status { DRAFT ACTIVE }", "scalar Status", "Status: was a enum, is now a scalar"},
		{"a directive removed", "directive @range(min: Int, max: Int) on ARGUMENT_DEFINITION", "", "@range: the directive was removed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			next := base
			if tt.from != "" {
				if !strings.Contains(base, tt.from) {
					t.Fatalf("the base has no %q", tt.from)
				}
				next = strings.Replace(base, tt.from, tt.to, 1)
			} else {
				next += tt.to
			}
			got := sdldiff.Breaking(load(t, base), load(t, next))
			switch {
			case tt.want == "" && len(got) > 0:
				t.Fatalf("reported %v", got)
			case tt.want != "" && (len(got) == 0 || !strings.HasPrefix(got[0].String(), tt.want)):
				t.Fatalf("got %v, want %q", got, tt.want)
			}
		})
	}
}
