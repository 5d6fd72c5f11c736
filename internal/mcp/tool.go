package mcp

import (
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vektah/gqlparser/v2/ast"
)

// tool is one generated MCP tool and what calling it runs.
type tool struct {
	def      *sdk.Tool
	mutation bool
	op       *operation // nil for the ad-hoc tools
	input    *validatorSchema
}

// operationTool builds the MCP tool of one operation document.
// toolInputs names the tool whose whole input each input type is.
func operationTool(schema *ast.Schema, op *operation, toolInputs map[string]string) (*tool, error) {
	mutation := op.op.Operation == ast.Mutation
	in := inputSchema(schema, op.op, op.doc, toolInputs)
	v, err := compileInput(op.name, in)
	if err != nil {
		return nil, err
	}
	def := &sdk.Tool{
		Name:         op.name,
		Description:  description(schema, op),
		InputSchema:  in,
		OutputSchema: outputSchema(schema, op.op, op.doc),
		Annotations:  annotations(op.name, mutation),
	}
	return &tool{def: def, mutation: mutation, op: op, input: v}, nil
}

// toolInputs maps each input object type that is a tool's whole input (its
// one variable) to that tool's name.
func toolInputs(ops []*operation) map[string]string {
	out := map[string]string{}
	for _, op := range ops {
		if vs := op.op.VariableDefinitions; len(vs) == 1 && vs[0].Definition != nil && vs[0].Definition.Kind == ast.InputObject {
			out[vs[0].Type.Name()] = op.name
		}
	}
	return out
}

// description is the document's comment, then the schema's description of
// each root field the operation selects (what the API itself says).
func description(schema *ast.Schema, op *operation) string {
	parts := []string{}
	if op.comment != "" {
		parts = append(parts, op.comment)
	}
	root := schema.Query
	if op.op.Operation == ast.Mutation {
		root = schema.Mutation
	}
	for _, sel := range op.op.SelectionSet {
		f, ok := sel.(*ast.Field)
		if !ok {
			continue
		}
		if def := root.Fields.ForName(f.Name); def != nil && def.Description != "" {
			parts = append(parts, "GraphQL `"+f.Name+"`: "+strings.TrimSpace(def.Description))
		}
	}
	return strings.Join(parts, "\n\n")
}

// annotations: a query only reads and may be repeated; a mutation writes,
// and only a supersede retires what was there (destructive). Every write is
// keyed by an optional idempotency key, so a mutation is not idempotent unless
// the caller sends one.
func annotations(name string, mutation bool) *sdk.ToolAnnotations {
	if !mutation {
		return &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	}
	return &sdk.ToolAnnotations{DestructiveHint: ptr(strings.HasPrefix(name, "supersede"))}
}

func ptr[T any](v T) *T { return &v }
