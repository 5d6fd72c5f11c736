package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scidex/substrate/internal/ref"
)

// resources/list lists the artifacts the caller may read, newest first, a
// page at a time (nextCursor): the same listing as search's STRUCTURED mode
// over every type, run with the caller's credentials through /graphql, so
// an artifact the caller may not read is not listed. The template
// (resources/templates/list) still says how to name any artifact.

// resourcePage is how many resources one resources/list answers.
const resourcePage = 50

const listResourcesQuery = `query ListResources($first: Int!, $after: Cursor) {
  search(query: "", mode: STRUCTURED, filter: {isLatest: true}, first: $first, after: $after) {
    edges { node { artifact { ref type title updatedAt } } }
    pageInfo { hasNextPage endCursor }
  } }`

// listResources is the receiving middleware that answers resources/list.
func (s *Server) listResources(c Caller) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			lr, ok := req.(*sdk.ListResourcesRequest)
			if method != "resources/list" || !ok {
				return next(ctx, method, req)
			}
			after := ""
			if lr.Params != nil {
				after = lr.Params.Cursor
			}
			return s.resourcePage(ctx, s.credentials(ctx, c, lr.Extra), after)
		}
	}
}

func (s *Server) resourcePage(ctx context.Context, cred credentials, after string) (*sdk.ListResourcesResult, error) {
	vars := map[string]any{"first": resourcePage}
	if after != "" {
		vars["after"] = after
	}
	raw, _ := json.Marshal(vars)
	resp, err := s.run(ctx, cred, gqlRequest{Query: listResourcesQuery, OperationName: "ListResources", Variables: raw})
	if err != nil {
		return nil, fmt.Errorf("resources/list: %w", err)
	}
	if len(resp.Errors) > 0 {
		code, _ := resp.Errors[0].Extensions["code"].(string)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resources/list: " + code + " " + resp.Errors[0].Message}
	}
	var data struct {
		Search struct {
			Edges []struct {
				Node struct {
					Artifact struct{ Ref, Type, Title, UpdatedAt string }
				}
			}
			PageInfo struct {
				HasNextPage bool
				EndCursor   string
			}
		}
	}
	if err := json.Unmarshal(resp.Data, &data); err != nil {
		return nil, fmt.Errorf("resources/list: %w", err)
	}
	out := &sdk.ListResourcesResult{Resources: []*sdk.Resource{}}
	for _, e := range data.Search.Edges {
		a := e.Node.Artifact
		r, err := ref.Parse(a.Ref)
		if err != nil {
			continue
		}
		out.Resources = append(out.Resources, &sdk.Resource{URI: ResourceURI(r.Unpinned()), Name: a.Type + ":" + r.ID, Title: a.Title,
			MIMEType: resourceMIME, Description: a.Type + ", updated " + a.UpdatedAt})
	}
	if data.Search.PageInfo.HasNextPage {
		out.NextCursor = data.Search.PageInfo.EndCursor
	}
	return out, nil
}
