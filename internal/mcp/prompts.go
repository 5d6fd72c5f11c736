package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Skills are MCP prompts (SPEC-002 §8): each installed skill is a prompt
// named skill.<name> whose messages are the procedure an agent follows to
// run it — what it computes, the inputs with their units, what comes back,
// its limits and disclaimers, a worked example, and the tool call to make
// (tool.<tool_name>, or run_skill). An agent asks "how do I run an NCA on my
// data" and gets the procedure, not a search. prompts/get takes the
// caller's question or data description as the optional argument "task",
// quoted in the prompt so the agent answers that task.
//
// The prompts are read from the skill artifacts with the caller's
// credentials through /graphql, so the list follows the catalog (a skill
// installed or superseded shows at once) and shows only what the caller may
// read.

// PromptPrefix starts the MCP name of a skill's prompt.
const PromptPrefix = "skill."

const skillsQuery = `query SkillPrompts($after: Cursor) {
  skills(first: 100, after: $after) {
    edges { node { ... on Skill { ref content } } }
    pageInfo { hasNextPage endCursor }
  } }`

// skillDoc is what a prompt is written from: a skill artifact's content.
type skillDoc struct {
	Name         string          `json:"name"`
	Version      string          `json:"version"`
	Summary      string          `json:"summary"`
	Domain       string          `json:"domain"`
	ToolName     string          `json:"tool_name"`
	Inputs       string          `json:"inputs"`
	Outputs      string          `json:"outputs"`
	Limitations  string          `json:"limitations"`
	Disclaimers  []string        `json:"disclaimers"`
	ServedStatus string          `json:"served_status"`
	CheckLogic   string          `json:"check_logic_version"`
	Example      json.RawMessage `json:"example"`
	ref          string
}

// skillPrompts is the receiving middleware that answers prompts/list and
// prompts/get.
func (s *Server) skillPrompts(c Caller) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			switch r := req.(type) {
			case *sdk.ListPromptsRequest:
				docs, err := s.skillDocs(ctx, s.credentials(ctx, c, r.Extra))
				if err != nil {
					return nil, err
				}
				out := &sdk.ListPromptsResult{Prompts: []*sdk.Prompt{}}
				for _, d := range docs {
					out.Prompts = append(out.Prompts, d.prompt())
				}
				return out, nil
			case *sdk.GetPromptRequest:
				if r.Params == nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "prompts/get needs a name"}
				}
				docs, err := s.skillDocs(ctx, s.credentials(ctx, c, r.Extra))
				if err != nil {
					return nil, err
				}
				for _, d := range docs {
					if PromptPrefix+d.Name == r.Params.Name {
						return d.messages(r.Params.Arguments["task"]), nil
					}
				}
				names := make([]string, len(docs))
				for i, d := range docs {
					names[i] = PromptPrefix + d.Name
				}
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
					Message: fmt.Sprintf("no prompt %q: the prompts are the skills, %s", r.Params.Name, strings.Join(names, ", "))}
			}
			return next(ctx, method, req)
		}
	}
}

// skillDocs reads every skill the caller may read.
func (s *Server) skillDocs(ctx context.Context, cred credentials) ([]skillDoc, error) {
	var out []skillDoc
	after := ""
	for {
		vars, _ := json.Marshal(map[string]any{"after": nilIfEmpty(after)})
		resp, err := s.run(ctx, cred, gqlRequest{Query: skillsQuery, OperationName: "SkillPrompts", Variables: vars})
		if err != nil {
			return nil, fmt.Errorf("read the skills: %w", err)
		}
		if len(resp.Errors) > 0 {
			code, _ := resp.Errors[0].Extensions["code"].(string)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "read the skills: " + code + " " + resp.Errors[0].Message}
		}
		var data struct {
			Skills struct {
				Edges []struct {
					Node struct {
						Ref     string
						Content json.RawMessage
					}
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   string
				}
			}
		}
		if err := json.Unmarshal(resp.Data, &data); err != nil {
			return nil, fmt.Errorf("read the skills: %w", err)
		}
		for _, e := range data.Skills.Edges {
			var d skillDoc
			if json.Unmarshal(e.Node.Content, &d) == nil && d.Name != "" {
				d.ref = e.Node.Ref
				out = append(out, d)
			}
		}
		if !data.Skills.PageInfo.HasNextPage {
			return out, nil
		}
		after = data.Skills.PageInfo.EndCursor
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (d skillDoc) prompt() *sdk.Prompt {
	return &sdk.Prompt{Name: PromptPrefix + d.Name, Title: d.Name + " " + d.Version,
		Description: strings.TrimSpace(d.Summary + " How to run it: inputs with their units, what it returns, its limits, an example, and the tool call to make."),
		Arguments:   []*sdk.PromptArgument{{Name: "task", Description: "Your question or a description of your data (optional): the prompt asks the agent to do it with this skill."}}}
}

// messages is the procedure for running the skill, as one user message.
func (d skillDoc) messages(task string) *sdk.GetPromptResult {
	var b strings.Builder
	fmt.Fprintf(&b, "# Running the skill %s %s (%s)\n\n%s\n", d.Name, d.Version, d.ServedStatus, d.Summary)
	if task != "" {
		fmt.Fprintf(&b, "\nThe task: %s\n\nDo it with this skill, as below.\n", task)
	}
	tool := "tool." + d.ToolName
	if d.ToolName == "" {
		tool = "run_skill"
	}
	fmt.Fprintf(&b, "\n## Inputs\n%s\n\nQuantities are {\"value\": …, \"unit\": …} (or {\"values\": […], \"unit\": …}); a unit the skill does not take is refused, naming the units it takes.\n", d.Inputs)
	fmt.Fprintf(&b, "\n## What comes back\n%s\n", d.Outputs)
	if d.Limitations != "" {
		fmt.Fprintf(&b, "\n## Limits\n%s\n", d.Limitations)
	}
	if len(d.Disclaimers) > 0 {
		fmt.Fprintf(&b, "\n## Say with every result\n- %s\n", strings.Join(d.Disclaimers, "\n- "))
	}
	var ex struct {
		Description string          `json:"description"`
		Inputs      json.RawMessage `json:"inputs"`
	}
	if json.Unmarshal(d.Example, &ex) == nil && len(ex.Inputs) > 0 {
		fmt.Fprintf(&b, "\n## Example\n%s\n\n```json\n%s\n```\n", ex.Description, ex.Inputs)
	}
	fmt.Fprintf(&b, "\n## The call\nCall the MCP tool `%s` with the inputs as its arguments (the same as `run_skill` {\"input\": {\"name\": %q, \"inputs\": …}}, which also stores a skill_result). "+
		"The call is recorded as a tool_call with the inputs, the check logic version (%s) and the result; a queued call answers its status: follow it with get_tool_call.\n",
		tool, d.Name, d.CheckLogic)
	return &sdk.GetPromptResult{Description: d.Summary,
		Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: b.String()}}}}
}
