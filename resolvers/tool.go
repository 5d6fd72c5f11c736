package resolvers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/scidex/substrate/graph/model"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/filter"
	"github.com/scidex/substrate/internal/problem"
	"github.com/scidex/substrate/internal/ref"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolreg"
)

// The tool resolvers are thin: the dispatcher (internal/dispatch) and the
// registrar (internal/toolreg) do the work; these convert their inputs and
// results.

func (r *Resolver) dispatcher() (*dispatch.Dispatcher, error) {
	if r.Dispatch == nil {
		return nil, errors.New("this server was composed without a tool dispatcher")
	}
	return r.Dispatch, nil
}

func (r *Resolver) registrar() (*toolreg.Registrar, error) {
	if r.Registrar == nil {
		return nil, errors.New("this server was composed without a tool registrar")
	}
	return r.Registrar, nil
}

func toolCallModel(a *store.Artifact) *model.ToolCall {
	tc, _ := model.NewArtifact(a).(*model.ToolCall)
	return tc
}

func registerInput(in model.RegisterToolInput) (toolreg.RegisterInput, error) {
	out := toolreg.RegisterInput{Manifest: json.RawMessage(in.Manifest), IdempotencyKey: deref(in.IdempotencyKey)}
	var problems []problem.Detail
	for i, f := range in.Files {
		b, err := base64.StdEncoding.DecodeString(f.ContentBase64)
		if err != nil {
			problems = append(problems, problem.Field(fmt.Sprintf("input.files.%d.contentBase64", i), "base64",
				"is not standard padded base64: "+err.Error(), nil))
			continue
		}
		out.Files = append(out.Files, toolreg.Upload{Path: f.Path, Content: b})
	}
	if len(problems) > 0 {
		return out, problem.Invalid(problems...)
	}
	return out, nil
}

// toolsFilter narrows the catalog by runtime and lifecycle state.
func toolsFilter(runtime, state *string) (*filter.Expr, error) {
	f := map[string]any{}
	if runtime != nil {
		f["content.runtime"] = *runtime
	}
	if state != nil {
		f["lifecycleState"] = *state
	}
	if len(f) == 0 {
		return nil, nil
	}
	b, _ := json.Marshal(f)
	return filter.Parse("filter", b)
}

// toolUsage reads a tool's usage through the request's loaders: one
// statement for every tool of a page.
func (r *Resolver) toolUsage(ctx context.Context, name string) (*model.ToolUsage, error) {
	row, err := r.loaders(ctx).ToolUsage(ctx, name)
	if err != nil {
		return nil, err
	}
	u := &model.ToolUsage{Calls: int(row.Calls), Succeeded: int(row.Succeeded), Failed: int(row.Failed),
		P50DurationMs: nanNil(row.P50DurationMs), MeanCostUsd: nanNil(row.MeanCostUsd)}
	if done := row.Succeeded + row.Failed; done > 0 {
		rel := float64(row.Succeeded) / float64(done)
		u.Reliability = &rel
	}
	return u, nil
}

func nanNil(f float64) *float64 {
	if math.IsNaN(f) {
		return nil
	}
	return &f
}

func toolCallRef(id string) (ref.Ref, error) {
	r, err := ref.Parse(dispatch.CallType + ":" + id)
	if err != nil {
		return ref.Ref{}, problem.Invalid(problem.Field("id", "ref", err.Error(), id))
	}
	return r, nil
}

// searchConnection serves search hits as an ArtifactConnection (the tools
// catalog searched by name, summary and examples), best first.
func (r *Resolver) searchConnection(ctx context.Context, p store.SearchParams, after *string) (*model.ArtifactConnection, error) {
	res, err := r.searchPage(ctx, p, after, "edges", "node")
	if err != nil {
		return nil, err
	}
	conn := &model.ArtifactConnection{Edges: make([]*model.ArtifactEdge, len(res.Hits)), PageInfo: &model.PageInfo{HasNextPage: res.HasNext}}
	for i, h := range res.Hits {
		conn.Edges[i] = &model.ArtifactEdge{Cursor: h.Cursor, Node: model.NewArtifact(h.Artifact)}
	}
	setPageInfo(conn.PageInfo, len(conn.Edges), func(i int) string { return conn.Edges[i].Cursor }, after != nil)
	return conn, nil
}
