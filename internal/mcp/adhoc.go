package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/scidex/substrate/internal/problem"
)

// The ad-hoc tools are not generated from a document: execute runs any
// GraphQL the agent writes, schema shows what it may write.
const (
	executeName = "execute"
	schemaName  = "schema"
)

func (s *Server) executeTool() *tool {
	in := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query":         map[string]any{"type": "string", "description": "A GraphQL document (a query; a mutation only when the server allows ad-hoc mutations)."},
			"variables":     map[string]any{"type": "object", "description": "The operation's variables."},
			"operationName": map[string]any{"type": "string", "description": "Which operation of the document to run, when it holds several."},
		},
		"required":             []string{"query"},
		"additionalProperties": false,
	}
	v, err := compileInput(executeName, in)
	if err != nil {
		panic(err) // a constant schema
	}
	desc := "Run a GraphQL query against the substrate, under the same limits (depth, cost, response size) as /graphql. " +
		"The schema tool, or introspection, shows what can be asked. The result is the response's data; GraphQL errors are an error result."
	if s.opts.Mutations == MutationsAll {
		desc += " Mutations are allowed for a token with the contributor permission."
	} else {
		desc += " Mutations are not run here: use the mutation tools."
	}
	t := &tool{def: &sdk.Tool{Name: executeName, Description: desc, InputSchema: in,
		Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(s.opts.Mutations == MutationsAll)}}, input: v}
	return t
}

// execute is the execute tool's handler, shared by every kind of caller.
func (s *Server) execute(ctx context.Context, c Caller, req *sdk.CallToolRequest, t *tool) (*sdk.CallToolResult, error) {
	if probs := t.input.check(req.Params.Arguments); len(probs) > 0 {
		return invalidArguments(executeName, probs), nil
	}
	var args gqlRequest
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return refusal(problem.ValidationFailed, "the arguments are not JSON: "+err.Error()), nil
	}
	// A document that does not parse goes on: the endpoint says what is wrong
	// with it as it would over HTTP.
	if doc, err := parser.ParseQuery(&ast.Source{Input: args.Query}); err == nil {
		if op := pick(doc, args.OperationName); op != nil {
			switch {
			case op.Operation == ast.Subscription:
				return refusal(problem.ValidationFailed, "subscriptions are not served by execute; subscribe over /graphql (websocket or SSE)"), nil
			case op.Operation == ast.Mutation && s.opts.Mutations != MutationsAll:
				return refusal(problem.PermissionDenied, "execute runs queries only on this server (mutations: "+string(s.opts.Mutations)+
					"); use the mutation tools. Nothing was written."), nil
			case op.Operation == ast.Mutation && !c.Writer:
				return refusal(problem.PermissionDenied, "permission denied: a mutation needs the contributor permission, which this token does not hold. Nothing was written."), nil
			}
		}
	}
	resp, err := s.run(ctx, s.credentials(ctx, c, req.Extra), args)
	if err != nil {
		return nil, fmt.Errorf("execute: %w", err)
	}
	return result(resp), nil
}

// pick is the operation a request runs: the named one, or the only one.
func pick(doc *ast.QueryDocument, name string) *ast.OperationDefinition {
	if name != "" {
		return doc.Operations.ForName(name)
	}
	if len(doc.Operations) == 1 {
		return doc.Operations[0]
	}
	return nil
}

func (s *Server) schemaTool() *tool {
	in := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"type": map[string]any{"type": "string", "description": "One type's name (Query, Mutation, Artifact, CreateArtifactInput…); omit for the whole schema."},
		},
		"additionalProperties": false,
	}
	out := map[string]any{
		"type":       "object",
		"properties": map[string]any{"sdl": map[string]any{"type": "string", "description": "GraphQL SDL, with descriptions."}},
		"required":   []string{"sdl"},
	}
	v, err := compileInput(schemaName, in)
	if err != nil {
		panic(err) // a constant schema
	}
	return &tool{def: &sdk.Tool{Name: schemaName, InputSchema: in, OutputSchema: out,
		Description: "The substrate's GraphQL schema as SDL, or one type's definition: what execute can ask and what every tool's fields mean.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}}, input: v}
}

// sdl is the schema tool's handler.
func (s *Server) sdl(req *sdk.CallToolRequest, t *tool) *sdk.CallToolResult {
	if probs := t.input.check(req.Params.Arguments); len(probs) > 0 {
		return invalidArguments(schemaName, probs)
	}
	var args struct{ Type string }
	_ = json.Unmarshal(req.Params.Arguments, &args)
	var b strings.Builder
	f := formatter.NewFormatter(&b, formatter.WithIndent("  "))
	if args.Type == "" {
		f.FormatSchema(s.schema)
	} else {
		def := s.schema.Types[args.Type]
		if def == nil || def.BuiltIn {
			return refusal(problem.ValidationFailed, fmt.Sprintf("type: the schema has no type %q", args.Type),
				problem.Field("type", "known_type", "is not a type of the schema", args.Type))
		}
		f.FormatSchemaDocument(&ast.SchemaDocument{Definitions: ast.DefinitionList{def}})
	}
	out, _ := json.Marshal(map[string]string{"sdl": b.String()})
	return &sdk.CallToolResult{StructuredContent: json.RawMessage(out), Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}}
}
