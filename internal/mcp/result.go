package mcp

import (
	"encoding/json"
	"net/http"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/problem"
)

// toolError is one entry of an isError result's errors: the GraphQL error's
// code and message (and path), or a refusal of this layer in the same shape.
type toolError struct {
	Code     string           `json:"code"`
	Message  string           `json:"message"`
	Path     []any            `json:"path,omitempty"`
	Status   int              `json:"httpStatus,omitempty"`
	Request  string           `json:"requestId,omitempty"`
	Problems []problem.Detail `json:"problems,omitempty"`
}

// errorBody is the text of an isError result: JSON an agent can read the code
// from, with what data the response had beside its errors.
type errorBody struct {
	Errors []toolError      `json:"errors"`
	Data   *json.RawMessage `json:"data,omitempty"`
}

// result turns the endpoint's answer into a tool result. Data is the
// structured content, union members such as VersionConflict or
// ValidationFailed included: they are answers the agent acts on (retry with
// the merge hint, fix the paths named), not failures of the call. GraphQL
// errors and HTTP refusals (401, 413, …) are isError results carrying each
// error's code and message; they have no structured content, which the tool's
// output schema would not describe.
func result(resp *response) *sdk.CallToolResult {
	if resp.status == http.StatusOK && len(resp.Errors) == 0 && len(resp.Data) > 0 && string(resp.Data) != "null" {
		return &sdk.CallToolResult{
			StructuredContent: resp.Data,
			Content:           []sdk.Content{&sdk.TextContent{Text: string(resp.Data)}},
		}
	}
	body := errorBody{}
	for _, e := range resp.Errors {
		te := toolError{Code: string(problem.InternalError), Message: e.Message, Path: e.Path}
		if c, ok := e.Extensions["code"].(string); ok && c != "" {
			te.Code = c
		}
		if rid, ok := e.Extensions["requestId"].(string); ok {
			te.Request = rid
		}
		if resp.status != http.StatusOK {
			te.Status = resp.status
		}
		body.Errors = append(body.Errors, te)
	}
	if len(body.Errors) == 0 {
		body.Errors = []toolError{{Code: string(problem.InternalError), Status: resp.status,
			Message: "the GraphQL endpoint answered " + strconv.Itoa(resp.status) + " with neither data nor errors"}}
	}
	if len(resp.Data) > 0 && string(resp.Data) != "null" {
		body.Data = &resp.Data
	}
	return errorResult(body)
}

// refusal is an isError result of this layer: the call never reached the
// endpoint, so nothing ran and nothing was written.
func refusal(code problem.Code, msg string, problems ...problem.Detail) *sdk.CallToolResult {
	return errorResult(errorBody{Errors: []toolError{{Code: string(code), Message: msg, Problems: problems}}})
}

func errorResult(body errorBody) *sdk.CallToolResult {
	raw, _ := json.Marshal(body)
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(raw)}}}
}
