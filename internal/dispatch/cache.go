package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/dbsqlc"
	"github.com/scidex/substrate/internal/pgjson"
	"github.com/scidex/substrate/internal/request"
	"github.com/scidex/substrate/internal/store"
)

// The result cache answers a deterministic tool's call from an earlier
// successful call of the same tool version with the same canonical args. It
// is off unless the operator enables it (Opts.Cache), and with it off nothing
// is read from or written to it. A hit is still a recorded call: a tool_call
// marked cached, counted in the tool's usage.

type cacheHit struct {
	result  json.RawMessage
	callRef string
}

func (d *Dispatcher) caching(t *tool) bool { return d.opts.Cache && t.m.Deterministic }

// cached looks the call up.
func (d *Dispatcher) cached(ctx context.Context, t *tool, hash string) (*cacheHit, bool, error) {
	if !d.caching(t) {
		return nil, false, nil
	}
	row, err := dbsqlc.New(d.store.Pool()).ToolCacheGet(ctx, t.art.Ref().String(), hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the result cache: %w", err)
	}
	return &cacheHit{result: json.RawMessage(row.Result), callRef: row.CallRef}, true, nil
}

// recordCached records a call answered from the cache: finished at once.
func (d *Dispatcher) recordCached(ctx context.Context, t *tool, rec *record, hit *cacheHit, key string, opts store.ServerOpts) (*store.Artifact, error) {
	now := time.Now()
	rec.Status, rec.Result, rec.Cached, rec.StartedAt, rec.JobID = StatusSucceeded, hit.result, true, stamp(now), "cache"
	rec.finished(now, now, nil, 0)
	opts.Event = EventCompleted
	res, err := d.store.ServerCreate(ctx, "invokeTool", store.CreateParams{Type: CallType, Title: title(t) + " (cached)",
		Content: mustJSON(rec), IdempotencyKey: key}, opts)
	if err != nil {
		return nil, err
	}
	if res.Replay {
		return d.current(ctx, res.Artifact)
	}
	d.usage.add(t.m.Name)
	return res.Artifact, nil
}

// storeCache keeps a successful result of a deterministic tool, when caching
// is on. A failure to store is logged: the call itself succeeded.
func (d *Dispatcher) storeCache(t *tool, rec *record) {
	if !d.caching(t) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := dbsqlc.New(d.store.Pool()).ToolCachePut(ctx, dbsqlc.ToolCachePutParams{ToolRef: rec.Tool, InputsHash: rec.InputsHash,
		Result: pgjson.JSON(rec.Result), CallRef: rec.Tool})
	if err != nil {
		d.log.Warn("tool result cache: store failed", "tool", t.m.Name, "err", err)
	}
}

// CacheEntries counts the cache's entries (tests and operators).
func (d *Dispatcher) CacheEntries(ctx context.Context) (int64, error) {
	return dbsqlc.New(d.store.Pool()).ToolCacheCount(ctx)
}

var _ = request.From
