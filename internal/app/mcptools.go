package app

import (
	"context"
	"encoding/json"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/filter"
	"github.com/scidex/substrate/internal/mcp"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// syncMCPTools keeps the MCP server's list of substrate tools equal to the
// active tools: once at start, then after every tool event from any process
// (registered, activated, deprecated), so MCP clients see the catalog change
// (notifications/tools/list_changed).
//
// It subscribes before it returns (before the first listing, so a change in
// between is not missed, and before Start returns) and syncs on its own
// goroutine (run).
func (a *App) syncMCPTools(ctx context.Context) (run func() error, err error) {
	m := a.Handler.MCP()
	if m == nil {
		return func() error { return nil }, nil
	}
	sel, err := event.NewSelector([]string{"tool.*", "artifact.*"}, nil, "")
	if err != nil {
		return nil, err
	}
	sub := a.Hub.Subscribe(ctx, event.SubscribeOpts{Actor: auth.System(), Selector: sel})
	return func() error { return a.mcpToolsLoop(ctx, m, sub) }, nil
}

func (a *App) mcpToolsLoop(ctx context.Context, m *mcp.Server, sub *event.Sub) error {
	sync := func() {
		tools, err := activeTools(ctx, a.Store)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn("mcp: list the active tools", "err", err)
			}
			return
		}
		m.SyncCatalog(tools)
	}
	sync()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sub.Done():
			return nil
		case e := <-sub.C:
			if e.Ref == nil || len(*e.Ref) < 5 || (*e.Ref)[:5] != "tool:" {
				continue
			}
			sync()
		}
	}
}

// activeTools lists the active tool artifacts, as the MCP server lists them.
func activeTools(ctx context.Context, st *store.Store) ([]mcp.CatalogTool, error) {
	ctx = request.With(ctx, request.System("mcp-catalog", time.Now()))
	f, err := filter.Parse("filter", []byte(`{"lifecycleState": "active"}`))
	if err != nil {
		return nil, err
	}
	var out []mcp.CatalogTool
	after := ""
	for {
		first := 100
		page, err := st.List(ctx, store.ListParams{Type: "tool", Filter: f, OrderBy: store.OrderCreatedAt, First: &first, After: after})
		if err != nil {
			return nil, err
		}
		for _, a := range page.Items {
			var m struct {
				Name         string          `json:"name"`
				Version      string          `json:"version"`
				Summary      string          `json:"summary"`
				InputSchema  json.RawMessage `json:"input_schema"`
				OutputSchema json.RawMessage `json:"output_schema"`
			}
			if json.Unmarshal(a.Content, &m) != nil {
				continue
			}
			out = append(out, mcp.CatalogTool{Name: m.Name, Version: m.Version, Summary: m.Summary,
				InputSchema: m.InputSchema, OutputSchema: m.OutputSchema, ContentHash: a.ContentHash})
		}
		if !page.HasNext || len(page.Cursors) == 0 {
			return out, nil
		}
		after = page.Cursors[len(page.Cursors)-1]
	}
}
