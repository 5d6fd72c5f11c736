package main

import (
	"fmt"
	"log"
	"strings"

	"github.com/99designs/gqlgen/codegen/templates"
	"github.com/vektah/gqlparser/v2/ast"
)

// envelopeCost names the cost function (resolvers/complexity.go) of each
// field of interface Artifact that returns a list, a connection or JSON. Every
// such field must be named here: renderComplexity fails on one that is not,
// so a new list on the interface cannot go unpriced on the typed subtypes.
var envelopeCost = map[string]string{
	"content":    "jsonCost",
	"provenance": "unpagedListCost",
	"links":      "linksCost",
	"history":    "pageCost",
	"comments":   "pageCost",
}

// renderComplexity writes setArtifactComplexity, which prices, on every typed
// subtype and on GenericArtifact, the interface fields of envelopeCost and
// every content field that is JSON (jsonCost) or a list (unpagedListCost).
func renderComplexity(types []*typeInfo, fields []*ast.FieldDefinition) string {
	var envelope []string
	for _, f := range fields {
		fn, ok := envelopeCost[f.Name]
		if !ok {
			if priced(f.Type) {
				log.Fatalf("interface Artifact's field %s (%s) has no price: add it to envelopeCost in cmd/typegen/complexity.go", f.Name, f.Type)
			}
			continue
		}
		envelope = append(envelope, fmt.Sprintf("%s = %s", templates.ToGo(f.Name), fn))
	}
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("package resolvers\n\nimport \"github.com/scidex/substrate/graph\"\n\n")
	b.WriteString("// setArtifactComplexity prices the list and JSON fields of every artifact type:\n// lists by the page size they ask for, so one query cannot fan out to millions\n// of nodes, and JSON values as the documents they are.\nfunc setArtifactComplexity(c *graph.ComplexityRoot) {\n")
	all := append(append([]*typeInfo{}, types...), &typeInfo{GraphQL: "GenericArtifact"})
	for _, t := range all {
		for _, e := range envelope {
			fmt.Fprintf(&b, "\tc.%s.%s\n", t.GraphQL, e)
		}
		for _, f := range t.Fields {
			switch {
			case strings.HasPrefix(f.SDLType, "["):
				fmt.Fprintf(&b, "\tc.%s.%s = unpagedListCost\n", t.GraphQL, templates.ToGo(f.GraphQL))
			case strings.TrimSuffix(f.SDLType, "!") == "JSON":
				fmt.Fprintf(&b, "\tc.%s.%s = jsonCost\n", t.GraphQL, templates.ToGo(f.GraphQL))
			}
		}
	}
	b.WriteString("}\n")
	return gofmt(b.String())
}

// priced reports whether a field of this type needs a price of its own: a
// list, a connection or a JSON value.
func priced(t *ast.Type) bool {
	return t.Elem != nil || strings.HasSuffix(t.Name(), "Connection") || t.Name() == "JSON"
}
