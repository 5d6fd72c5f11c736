package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/scidex/substrate/internal/secrets"
	"github.com/scidex/substrate/runtimes/bwrap"
	"github.com/scidex/substrate/runtimes/httppost"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/queue"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/mcpserver"
	"github.com/scidex/substrate/runtimes/skillcall"
	"github.com/scidex/substrate/skills"
	"github.com/scidex/substrate/tools"
)

// toolFlags configure the tool dispatcher and its runtimes.
type toolFlags struct {
	secretsFile *string
	httpAllow   *string
	rateLimits  *string
	bwrapCache  *string
	bwrapUID    *int
	bwrapGID    *int
	gpus        *int
	mcpServers  *string
	cache       *bool
	cacheTTL    *time.Duration
	workers     *int
	rescueAfter *time.Duration
	datasetDir  *string
}

// addToolFlags adds the tool flags; workers is --tool-workers' default (0 for
// `scidex mcp`: an agent's stdio subprocess does not join the shared queue
// unless asked to).
func addToolFlags(f flags, workers int) toolFlags {
	return toolFlags{
		secretsFile: f.str("secrets-file", "SCIDEX_SECRETS_FILE", "",
			"file of tool secrets (NAME=value lines or a JSON object; mode 0600) that http_post tools name by secret_ref; SCIDEX_SECRET_<NAME> variables count too"),
		httpAllow: f.str("http-post-allow", "SCIDEX_HTTP_POST_ALLOW", "",
			"comma-separated host:port an http_post tool may reach although it is loopback or private (the outbound guard refuses those otherwise)"),
		bwrapCache: f.str("bwrap-cache-dir", "SCIDEX_BWRAP_CACHE_DIR", "",
			"where sandboxed tools' verified bundles are kept (default <data-dir>/bwrap-cache); the sandbox user must be able to traverse it"),
		bwrapUID: f.integer("bwrap-uid", "SCIDEX_BWRAP_UID", 65534, "the unprivileged uid sandboxed tools run as when the server is root", atLeast(1)),
		bwrapGID: f.integer("bwrap-gid", "SCIDEX_BWRAP_GID", 65534, "the unprivileged gid sandboxed tools run as when the server is root", atLeast(1)),
		gpus:     f.integer("gpus", "SCIDEX_GPUS", 0, "GPUs this server can give sandboxed tools; a tool asking for VRAM on a server with none is refused", atLeast(0)),
		mcpServers: f.str("mcp-servers", "SCIDEX_MCP_SERVERS", "",
			`file of the MCP servers mcp_server tools may call: {"servers": {"<name>": {"command": [...], "env": {...}} | {"url": "...", "headers": {...}}}}`),
		rateLimits: f.str("tool-rate-limits", "SCIDEX_TOOL_RATE_LIMITS", "",
			`per-actor, per-tool rate limits of invokeTool, JSON: {"<tool name or *>": {"rate": <calls per second>, "burst": <calls>}}`),
		cache: f.boolean("tool-cache", "SCIDEX_TOOL_CACHE", false, "answer deterministic tools from the result cache of earlier identical calls"),
		cacheTTL: f.duration("tool-cache-ttl", "SCIDEX_TOOL_CACHE_TTL", dispatch.DefaultCacheTTL,
			"how long a cached tool result is served; older entries are deleted by the hourly sweep", atLeast(time.Minute)),
		workers: f.integer("tool-workers", "SCIDEX_TOOL_WORKERS", workers, "queued tool calls this process works at once; 0 leaves them to `scidex worker`", atLeast(0)),
		datasetDir: f.str("dataset-dir", "SCIDEX_DATASET_DIR", "",
			"where dataset files are read (a dataset artifact's files[].path is relative to it, and each file must hash to its declared sha256); default <data-dir>/datasets"),
		rescueAfter: f.duration("tool-rescue-after", "SCIDEX_TOOL_RESCUE_AFTER", time.Hour,
			"how long a queued call may run before its worker is presumed dead and the call is retried or failed; longer than any queued tool's wall time", atLeast(time.Second)),
	}
}

// queueOpts is the job queue's configuration.
func (t toolFlags) queueOpts() queue.Opts {
	return queue.Opts{Workers: *t.workers, RescueAfter: *t.rescueAfter}
}

// dispatchOpts reads the tool flags; a malformed rate limit stops the start.
func (t toolFlags) dispatchOpts() (dispatch.Opts, error) {
	limits, err := dispatch.ParseRateLimits(*t.rateLimits)
	if err != nil {
		return dispatch.Opts{}, err
	}
	return dispatch.Opts{Limits: limits, Cache: *t.cache, CacheTTL: *t.cacheTTL, OnFinish: skills.StoreQueued}, nil
}

// runtimes returns the composition of this build's runtime registry: one
// line per runtime. It runs once the store exists (in-process tools write
// through it).
func (t toolFlags) runtimes(log *slog.Logger, dataDir string) func(*store.Store) (*runtimes.Registry, error) {
	return func(st *store.Store) (*runtimes.Registry, error) {
		datasets := *t.datasetDir
		if datasets == "" {
			datasets = filepath.Join(dataDir, "datasets")
		}
		rs := []runtimes.Runtime{tools.Runtime(skills.Deps{Store: st, DatasetDir: datasets}).WithLogger(log), skillcall.New(app.WorkPackets(st))}
		secretStore, err := secrets.Load(secrets.Options{File: *t.secretsFile})
		if err != nil {
			return nil, err
		}
		post, err := httppost.New(httppost.Options{Secrets: secretStore, Allow: splitList(*t.httpAllow), Logger: log})
		if err != nil {
			return nil, err
		}
		rs = append(rs, post)
		var servers map[string]mcpserver.Server
		if *t.mcpServers != "" {
			if servers, err = mcpserver.LoadServers(*t.mcpServers); err != nil {
				return nil, err
			}
		}
		mcp, err := mcpserver.New(mcpserver.Options{Servers: servers, Logger: log})
		if err != nil {
			return nil, err
		}
		rs = append(rs, mcp)
		// The sandbox user must traverse the cache: the data dir (often under
		// a private home) first, then a system cache directory.
		caches := []string{*t.bwrapCache}
		if *t.bwrapCache == "" {
			caches = []string{filepath.Join(dataDir, "bwrap-cache"), filepath.Join("/var/cache/scidex", "bwrap"), filepath.Join(os.TempDir(), "scidex-bwrap-cache")}
		}
		var boxErr error
		for _, cache := range caches {
			box, err := bwrap.New(bwrap.Options{CacheDir: cache, UID: *t.bwrapUID, GID: *t.bwrapGID, GPUs: *t.gpus, Logger: log})
			if err != nil {
				boxErr = errors.Join(boxErr, err)
				continue
			}
			log.Info("bwrap runtime", "cache", cache, "enforcement", fmt.Sprintf("%+v", box.Enforcement()))
			rs, boxErr = append(rs, box), nil
			break
		}
		if boxErr != nil {
			// A server without bubblewrap still serves everything else; a bwrap
			// tool is then refused at registration, naming the runtimes it has.
			log.Warn("the bwrap runtime is off: sandboxed tools will not run", "err", boxErr)
		}
		return runtimes.NewRegistry(rs...)
	}
}
