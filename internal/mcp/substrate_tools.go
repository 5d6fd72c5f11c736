package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/problem"
)

// The substrate's own tools are MCP tools too: every active tool artifact is
// listed (to callers who may invoke tools) as "tool.<name>", with its input
// and output schemas as declared, and calling it is invokeTool. The list
// follows the catalog: SyncCatalog replaces it whenever a tool is
// registered, activated or deprecated, and the SDK then sends
// notifications/tools/list_changed to the sessions that can hear it.

// ToolPrefix starts the MCP name of a substrate tool.
const ToolPrefix = "tool."

// CatalogTool is one active substrate tool.
type CatalogTool struct {
	Name, Version, Summary    string
	InputSchema, OutputSchema json.RawMessage
	ContentHash               string
}

// catalog is what is registered of the substrate's tools, and where.
type catalog struct {
	mu      sync.Mutex
	current map[string]CatalogTool // by MCP name
	targets []catalogTarget
}

// catalogTarget is a writer MCP server and the caller it serves: a tool
// added to it later runs for that caller (on stdio, with its token).
type catalogTarget struct {
	srv *sdk.Server
	c   Caller
}

// addTarget registers a writer MCP server: it gets the current catalog now
// and every change after.
func (s *Server) addTarget(srv *sdk.Server, c Caller) {
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	s.cat.targets = append(s.cat.targets, catalogTarget{srv, c})
	for _, ct := range s.cat.current {
		srv.AddTool(s.substrateTool(ct), s.invokeHandler(ct, c))
	}
}

// SyncCatalog sets the listed substrate tools to tools: new and changed ones
// added (replacing the old definition), gone ones removed.
func (s *Server) SyncCatalog(tools []CatalogTool) {
	want := map[string]CatalogTool{}
	for _, t := range tools {
		if !objectSchema(t.InputSchema) {
			s.opts.Logger.Warn("mcp: a tool whose input schema is not an object schema is not listed", "tool", t.Name)
			continue
		}
		want[ToolPrefix+t.Name] = t
	}
	s.cat.mu.Lock()
	defer s.cat.mu.Unlock()
	var gone []string
	for name := range s.cat.current {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, tg := range s.cat.targets {
		if len(gone) > 0 {
			tg.srv.RemoveTools(gone...)
		}
		for name, t := range want {
			if old, ok := s.cat.current[name]; ok && old.ContentHash == t.ContentHash {
				continue
			}
			tg.srv.AddTool(s.substrateTool(t), s.invokeHandler(t, tg.c))
		}
	}
	s.cat.current = want
}

// has reports whether name is a listed substrate tool.
func (c *catalog) has(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.current[name]
	return ok
}

func objectSchema(raw json.RawMessage) bool {
	var m map[string]any
	return json.Unmarshal(raw, &m) == nil && m["type"] == "object"
}

func (s *Server) substrateTool(t CatalogTool) *sdk.Tool {
	var in, out map[string]any
	_ = json.Unmarshal(t.InputSchema, &in)
	delete(in, "$schema")
	def := &sdk.Tool{Name: ToolPrefix + t.Name, Title: t.Name + " " + t.Version,
		Description: strings.TrimSpace(t.Summary + "\n\nA substrate tool (" + t.Name + " " + t.Version + "): calling it is invokeTool, recorded as a tool_call."),
		InputSchema: in, Annotations: &sdk.ToolAnnotations{}}
	if json.Unmarshal(t.OutputSchema, &out) == nil && out["type"] == "object" {
		delete(out, "$schema")
		declared := compactOutput(out).(map[string]any)
		wrapped := map[string]any{"type": "object", "anyOf": []any{declared, callStatusSchema}}
		// Its definitions move to the root, where its refs (#/$defs/…) point.
		for _, k := range []string{"$defs", "definitions"} {
			if d, ok := declared[k]; ok {
				wrapped[k] = d
				delete(declared, k)
			}
		}
		def.OutputSchema = wrapped
	}
	return def
}

// compactOutput is a tool's declared output schema as listed: what keys a
// result has and of what type, as the generated tools' output schemas say it
// (outputschema.go), because every client sends tools/list to its model
// whole. It drops the annotations (description, examples, title), which the
// result says of itself, and the lists of values and keys (enum, required,
// additionalProperties) that only make it stricter. A oneOf or anyOf left
// with an unconstrained member constrains nothing and goes too. Every step
// only relaxes the schema, so a result valid against the manifest's is valid
// against the listed one; get_tool reads the manifest's whole.
func compactOutput(s any) any {
	switch v := s.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			switch k {
			case "description", "examples", "title", "$comment", "enum", "required", "additionalProperties", "dependentRequired":
				continue
			case "properties", "$defs", "definitions", "patternProperties", "dependentSchemas":
				// Maps from names to schemas: the names are not keywords.
				if m, ok := x.(map[string]any); ok {
					mm := make(map[string]any, len(m))
					for name, sub := range m {
						mm[name] = compactOutput(sub)
					}
					out[k] = mm
					continue
				}
			case "const", "default":
				out[k] = x // values, not schemas
				continue
			case "oneOf", "anyOf":
				if m, ok := x.([]any); ok {
					members := compactOutput(m).([]any)
					if slices.ContainsFunc(members, unconstrained) {
						continue
					}
					out[k] = members
					continue
				}
			}
			out[k] = compactOutput(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = compactOutput(x)
		}
		return out
	}
	return s
}

// unconstrained reports whether a schema admits every value.
func unconstrained(s any) bool {
	if b, ok := s.(bool); ok {
		return b
	}
	m, ok := s.(map[string]any)
	return ok && len(m) == 0
}

// callStatusSchema is the other shape a substrate tool's structured content
// takes, beside its result: the call itself, when there is no result that
// keeps to the tool's output schema to give — queued or running (follow it
// with get_tool_call), succeeded with a result that breaks the output schema
// (the result and the violations), or failed (an isError result, its error).
// Every answer of a tool with an output schema is structured, as MCP clients
// require, whatever the call's state.
var callStatusSchema = map[string]any{
	"type": "object", "required": []any{"tool_call"}, "additionalProperties": false,
	"properties": map[string]any{
		"tool_call": map[string]any{
			"type": "object", "required": []any{"id", "ref", "status"},
			"properties": map[string]any{
				"id":     map[string]any{"type": "string"},
				"ref":    map[string]any{"type": "string"},
				"status": map[string]any{"enum": []any{"queued", "running", "succeeded", "failed", "cancelled"}},
				"follow": map[string]any{"type": "string"},
			},
		},
		"result":            map[string]any{},
		"output_violations": map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
		"error":             map[string]any{"type": "object"},
	},
}

// callStatus is the structured content of a call without a conforming
// result (callStatusSchema).
func callStatus(id, status string, extra map[string]any) map[string]any {
	tc := map[string]any{"id": id, "ref": "tool_call:" + id, "status": status}
	if status == "queued" || status == "running" {
		tc["follow"] = fmt.Sprintf(`get_tool_call {"id": %q}, until its status is SUCCEEDED, FAILED or CANCELLED`, id)
	}
	out := map[string]any{"tool_call": tc}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

const invokeQuery = `mutation InvokeTool($input: InvokeToolInput!) { invokeTool(input: $input) { __typename
  ... on ToolCall { artifactId ref status result error outputViolations costUsd durationMs }
  ... on ValidationFailed { problems { path constraint message } }
  ... on Problem { code message } } }`

// invokeHandler runs a substrate tool: invokeTool with the arguments as its
// args. A succeeded call's result is the structured content (when it keeps
// to the output schema); a failed call, or a refusal, is an isError result
// saying why; a queued call says where to follow it.
func (s *Server) invokeHandler(t CatalogTool, c Caller) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		vars, _ := json.Marshal(map[string]any{"input": map[string]any{"name": t.Name, "version": t.Version, "args": args}})
		resp, err := s.run(ctx, s.credentials(ctx, c, req.Extra), gqlRequest{Query: invokeQuery, OperationName: "InvokeTool", Variables: vars})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ToolPrefix+t.Name, err)
		}
		var data struct {
			InvokeTool struct {
				Typename         string          `json:"__typename"`
				ArtifactID       string          `json:"artifactId"`
				Ref              string          `json:"ref"`
				Status           string          `json:"status"`
				Result           json.RawMessage `json:"result"`
				Error            json.RawMessage `json:"error"`
				OutputViolations json.RawMessage `json:"outputViolations"`
				Code, Message    string
				Problems         []problem.Detail `json:"problems"`
			} `json:"invokeTool"`
		}
		if len(resp.Errors) > 0 || json.Unmarshal(resp.Data, &data) != nil {
			return result(resp), nil
		}
		call := data.InvokeTool
		switch {
		case call.Typename != "ToolCall":
			return refusal(problem.Code(call.Code), call.Message, call.Problems...), nil
		case call.Status == "SUCCEEDED":
			text := fmt.Sprintf("tool_call:%s succeeded: %s", call.ArtifactID, call.Result)
			out := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}
			if violations := string(call.OutputViolations); violations == "[]" || violations == "" || violations == "null" {
				out.StructuredContent = call.Result
			} else {
				out.Content = append(out.Content, &sdk.TextContent{Text: "the result breaks the tool's output schema: " + violations})
				out.StructuredContent = callStatus(call.ArtifactID, "succeeded", map[string]any{"result": call.Result, "output_violations": call.OutputViolations})
			}
			return out, nil
		case call.Status == "QUEUED" || call.Status == "RUNNING":
			status := strings.ToLower(call.Status)
			st := callStatus(call.ArtifactID, status, nil)
			return &sdk.CallToolResult{StructuredContent: st, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(
				"tool_call:%s is %s: follow it with %s", call.ArtifactID, status, st["tool_call"].(map[string]any)["follow"])}}}, nil
		default:
			status := strings.ToLower(call.Status)
			extra := map[string]any{}
			if len(call.Error) > 0 && string(call.Error) != "null" {
				extra["error"] = call.Error
			}
			return &sdk.CallToolResult{IsError: true, StructuredContent: callStatus(call.ArtifactID, status, extra), Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(
				"tool_call:%s %s: %s", call.ArtifactID, status, call.Error)}}}, nil
		}
	}
}
