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
	"github.com/scidex/substrate/internal/store"
)

// The result cache answers a deterministic tool's call from an earlier
// successful call of the same tool version with the same canonical args. It
// is off unless the operator enables it (Opts.Cache), and with it off nothing
// is read from or written to it. A hit is still a recorded call: a tool_call
// marked cached, counted in the tool's usage.
//
// Growth is bounded: an entry is served for Opts.CacheTTL after it was stored
// and CollectCache, which the server runs on its sweep ticker, deletes older
// ones.

// DefaultCacheTTL is how long a cached result is served unless the operator
// says otherwise (--tool-cache-ttl).
const DefaultCacheTTL = 7 * 24 * time.Hour

func (d *Dispatcher) caching(t *tool) bool { return d.opts.Cache && t.m.Deterministic }

// cacheTTL is Opts.CacheTTL or its default.
func (d *Dispatcher) cacheTTL() time.Duration {
	if d.opts.CacheTTL > 0 {
		return d.opts.CacheTTL
	}
	return DefaultCacheTTL
}

// cached looks the call up: the result of an earlier identical call.
func (d *Dispatcher) cached(ctx context.Context, t *tool, hash string) (json.RawMessage, bool, error) {
	if !d.caching(t) {
		return nil, false, nil
	}
	result, err := dbsqlc.New(d.store.Pool()).ToolCacheGet(ctx, t.art.Ref().String(), hash, time.Now().Add(-d.cacheTTL()))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the result cache: %w", err)
	}
	return json.RawMessage(result), true, nil
}

// recordCached records a call answered from the cache: finished at once.
func (d *Dispatcher) recordCached(ctx context.Context, t *tool, rec *record, result json.RawMessage, key string, opts store.ServerOpts) (*store.Artifact, error) {
	now := time.Now()
	rec.Status, rec.Result, rec.Cached, rec.StartedAt, rec.JobID = StatusSucceeded, result, true, Stamp(now), "cache"
	rec.finished(now, now, nil, 0)
	return d.end(ctx, ending{t: t, rec: rec, ev: EventCompleted, key: key, opts: opts, returned: true})
}

// storeCache keeps a successful result of a deterministic tool, when caching
// is on. A failure to store is logged: the call itself succeeded.
func (d *Dispatcher) storeCache(t *tool, rec *record) {
	if !d.caching(t) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := dbsqlc.New(d.store.Pool()).ToolCachePut(ctx, rec.Tool, rec.InputsHash, pgjson.JSON(rec.Result))
	if err != nil {
		d.log.Warn("tool result cache: store failed", "tool", t.m.Name, "err", err)
	}
}

// CacheEntries counts the cache's entries (tests and operators).
func (d *Dispatcher) CacheEntries(ctx context.Context) (int64, error) {
	return dbsqlc.New(d.store.Pool()).ToolCacheCount(ctx)
}

// CollectCache deletes the cache entries that expired by now (stored more
// than Opts.CacheTTL before it), whether or not caching is on.
func (d *Dispatcher) CollectCache(ctx context.Context, now time.Time) (int64, error) {
	return dbsqlc.New(d.store.Pool()).ToolCacheCollect(ctx, now.Add(-d.cacheTTL()))
}
