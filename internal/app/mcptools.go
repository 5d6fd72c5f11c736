package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/scidex/substrate/internal/event"
	"github.com/scidex/substrate/internal/filter"
	"github.com/scidex/substrate/internal/mcp"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// syncMCPTools keeps the MCP server in step with the log, from any
// process's writes: its list of substrate tools equal to the active tools
// (once at start, then after every tool event: registered, activated,
// deprecated), so MCP clients see the catalog change
// (notifications/tools/list_changed); and every artifact change reported to
// the MCP server, which tells the sessions subscribed to it
// (notifications/resources/updated).
//
// It subscribes and lists before it returns (the listing after the
// subscription, so a change in between is not missed; both before Start
// returns) and follows on its own goroutine (run), with the MCP server's
// notifier beside it.
func (a *App) syncMCPTools(ctx context.Context) (run func() error, err error) {
	m := a.Handler.MCP()
	if m == nil {
		return func() error { return nil }, nil
	}
	sel, err := event.NewSelector([]string{"*"}, nil, "")
	if err != nil {
		return nil, err
	}
	// One listing at a time, each applied before the next lists: a sync the
	// follower started before OnStart's installs must not apply its older
	// list after Start's newer one (TestGPUSubmitTool found its tool unknown).
	var mu sync.Mutex
	list := func() {
		mu.Lock()
		defer mu.Unlock()
		tools, err := activeTools(ctx, a.Store)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn("mcp: list the active tools", "err", err)
			}
			return
		}
		m.SyncCatalog(tools)
	}
	follow := a.Hub.Follow(ctx, sel, func(e *event.Event) {
		if e.Ref == nil {
			return
		}
		if strings.HasPrefix(*e.Ref, "tool:") {
			list()
		}
		m.ArtifactChanged(*e.Ref)
	})
	// Start lists once more after its OnStart work (which installs the
	// built-in tools): a client connecting right after Start finds every
	// active tool, not only once the follower has seen their events.
	a.syncMCP = list
	list()
	return func() error {
		notified := make(chan error, 1)
		go func() { notified <- m.Run(ctx) }()
		err := follow()
		return errors.Join(err, <-notified)
	}, nil
}

// activeTools lists the tools that serve, as the MCP server lists them: each
// active tool, and the reviewed version of each tool whose newest version is
// a draft waiting for review (what a call by name runs).
func activeTools(ctx context.Context, st *store.Store) ([]mcp.CatalogTool, error) {
	ctx = request.With(ctx, request.System("mcp-catalog", time.Now()))
	var out []mcp.CatalogTool
	for _, state := range []string{"active", "draft"} {
		arts, err := toolsIn(ctx, st, state)
		if err != nil {
			return nil, err
		}
		for _, a := range arts {
			if state == "draft" {
				if a, err = st.LatestInState(ctx, a, "active"); errors.Is(err, store.ErrNotFound) {
					continue // never reviewed: it serves nobody but its author
				} else if err != nil {
					return nil, err
				}
			}
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
	}
	return out, nil
}

// toolsIn lists the tools whose newest version is in a lifecycle state.
func toolsIn(ctx context.Context, st *store.Store, state string) ([]*store.Artifact, error) {
	f, err := filter.Parse("filter", []byte(fmt.Sprintf(`{"lifecycleState": %q}`, state)))
	if err != nil {
		return nil, err
	}
	var out []*store.Artifact
	after := ""
	for {
		first := 100
		page, err := st.List(ctx, store.ListParams{Type: "tool", Filter: f, OrderBy: store.OrderCreatedAt, First: &first, After: after})
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if !page.HasNext || len(page.Cursors) == 0 {
			return out, nil
		}
		after = page.Cursors[len(page.Cursors)-1]
	}
}
