package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// GraphQLPath is where the endpoint is asked: the server's own /graphql.
const GraphQLPath = "/graphql"

// gqlRequest is one GraphQL-over-HTTP request body.
type gqlRequest struct {
	Query         string          `json:"query"`
	OperationName string          `json:"operationName,omitempty"`
	Variables     json.RawMessage `json:"variables,omitempty"`
}

// response is what the endpoint answered.
type response struct {
	status int
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// run sends one GraphQL request through the endpoint in process: an
// http.Request built here, answered into memory. Going through the server's
// own handler rather than around it is what makes a tool call a GraphQL
// request in every respect: the same token verification and request context,
// body and response limits, depth and cost limits, rate limits and write
// journal, with no second configuration to keep in step.
func (s *Server) run(ctx context.Context, cred credentials, body gqlRequest) (*response, error) {
	budget := answerBudgetFrom(ctx)
	if budget.spent() {
		return budget.refusal(), nil // nothing more runs for this request
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode the GraphQL request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, GraphQLPath, bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("build the GraphQL request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if cred.authorization != "" {
		req.Header.Set("Authorization", cred.authorization)
	}
	if cred.cookie != "" {
		req.Header.Set("Cookie", cred.cookie)
	}
	if cred.csrf != "" {
		req.Header.Set("X-CSRF-Token", cred.csrf)
	}
	rec := &recorder{header: http.Header{}}
	s.opts.Endpoint.ServeHTTP(rec, req)
	// An answer is sent twice (the text copy and the structured content).
	if ok, refused := budget.charge(2 * int64(rec.body.Len())); !ok {
		return refused, nil
	}
	out := &response{status: rec.statusCode()}
	if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
		return nil, fmt.Errorf("the GraphQL endpoint answered %d with a body that is not a GraphQL response: %w", out.status, err)
	}
	return out, nil
}

// credentials are what identifies the caller to the endpoint: the MCP
// request's own Authorization (and browser session cookie) over HTTP, the
// configured token on stdio.
type credentials struct {
	authorization string
	cookie        string
	csrf          string // a browser session's X-CSRF-Token, which a cookie-authenticated write echoes
}

// recorder is an in-memory http.ResponseWriter.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}

func (r *recorder) statusCode() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}
