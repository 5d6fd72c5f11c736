package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/scidex/substrate/internal/secrets"
	"github.com/scidex/substrate/runtimes/bwrap"
	"github.com/scidex/substrate/runtimes/httppost"

	"github.com/scidex/substrate/internal/budget"
	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/queue"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/internal/toolspec"
	"github.com/scidex/substrate/internal/workpacket"
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
	bwrapShim   *string
	bwrapCacheM *int
	gpus        *int
	gpuMaxVRAM  *float64
	mcpServers  *string
	cache       *bool
	cacheTTL    *time.Duration
	workers     *int
	rescueAfter *time.Duration
	datasetDir  *string
	caps        capFlags
	budgetUSD   *string
	budgetEvery *string
}

// capFlags are the operator's default and maximum resource caps of tools
// (toolspec.CapLimits).
type capFlags struct {
	defWall, maxWall *time.Duration
	defMem, maxMem   *float64
	defCPUs, maxCPUs *float64
}

// addToolFlags adds the tool flags; workers is --tool-workers' default (0 for
// `scidex mcp`: an agent's stdio subprocess does not join the shared queue
// unless asked to).
func addToolFlags(f flags, workers int) toolFlags {
	return toolFlags{
		secretsFile: f.str("secrets-file", "SCIDEX_SECRETS_FILE", "",
			`file of tool secrets and their grants, mode 0600: JSON {"NAME": {"value": "...", "tools": ["tool.name"], "hosts": ["host:port"]}} (an entry without "value" grants the SCIDEX_SECRET_NAME variable); an http_post tool may send a secret only as granted; NAME=value lines and "NAME": "value" members are granted to nothing`),
		httpAllow: f.str("http-post-allow", "SCIDEX_HTTP_POST_ALLOW", "",
			"comma-separated host:port an http_post tool or a networked bwrap sandbox may reach although it is loopback or private (the outbound guard refuses those otherwise)"),
		bwrapShim: f.str("bwrap-egress-shim", "SCIDEX_BWRAP_EGRESS_SHIM", "",
			"the scidex-egress-shim program through which networked bwrap sandboxes reach the guarded egress proxy (default: beside this binary, then in PATH); without it no bwrap tool gets the network"),
		bwrapCacheM: f.integer("bwrap-cache-mb", "SCIDEX_BWRAP_CACHE_MB", 1024,
			"MiB of verified bundles the bwrap cache keeps; past it the least recently used bundles no call is running are removed", atLeast(1)),
		bwrapCache: f.str("bwrap-cache-dir", "SCIDEX_BWRAP_CACHE_DIR", "",
			"where sandboxed tools' verified bundles are kept (default <data-dir>/bwrap-cache); the sandbox user must be able to traverse it"),
		bwrapUID:   f.integer("bwrap-uid", "SCIDEX_BWRAP_UID", 65534, "the unprivileged uid sandboxed tools run as when the server is root", atLeast(1)),
		bwrapGID:   f.integer("bwrap-gid", "SCIDEX_BWRAP_GID", 65534, "the unprivileged gid sandboxed tools run as when the server is root", atLeast(1)),
		gpuMaxVRAM: f.float("gpu-max-vram-gb", "SCIDEX_GPU_MAX_VRAM_GB", 16, "the most VRAM one gpu.submit job may ask for; more is refused naming this flag", atLeast(0.0)),
		gpus:       f.integer("gpus", "SCIDEX_GPUS", 0, "GPUs this server can give sandboxed tools; a tool asking for VRAM on a server with none is refused", atLeast(0)),
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
			"how long a queued call may run before its worker is presumed dead and the call is retried or failed; at least --tool-max-wall-time", atLeast(time.Second)),
		caps: addCapFlags(f),
		budgetUSD: f.str("budget-default-usd", "SCIDEX_BUDGET_DEFAULT_USD", "",
			"the budget in US dollars of every actor an admin set none for (setBudget): a tool call that can cost more than its caller has left is refused; empty is no limit", dollars),
		budgetEvery: f.str("budget-default-period", "SCIDEX_BUDGET_DEFAULT_PERIOD", "none",
			"how often the default budget's spending starts again (UTC)", oneOf("none", "day", "week", "month")),
	}
}

// dollars accepts "" (no limit) or a number of dollars, at least 0.
func dollars(v string) string {
	if v == "" {
		return ""
	}
	if d, ok := parseFinite(v); !ok || d < 0 {
		return "a number of dollars, at least 0, or empty for no limit"
	}
	return ""
}

// budgets is the operator's default budget.
func (t toolFlags) budgets() *budget.Budgets {
	var def budget.Default
	if *t.budgetUSD != "" {
		v, _ := parseFinite(*t.budgetUSD) // checked by dollars
		def.LimitUSD = &v
	}
	def.Period, _ = budget.ParsePeriod(strings.ToLower(*t.budgetEvery)) // checked by oneOf
	return budget.New(def)
}

func addCapFlags(f flags) capFlags {
	d := toolspec.DefaultCapLimits()
	return capFlags{
		defWall: f.duration("tool-default-wall-time", "SCIDEX_TOOL_DEFAULT_WALL_TIME", d.Default.WallTime,
			"the wall time of a tool declaring no wall_time_min, and the most a tool not registered by an admin may declare", above(time.Duration(0))),
		maxWall: f.duration("tool-max-wall-time", "SCIDEX_TOOL_MAX_WALL_TIME", d.Max.WallTime,
			"the longest wall time any tool may declare; registration refuses more", above(time.Duration(0))),
		defMem: f.float("tool-default-memory-gb", "SCIDEX_TOOL_DEFAULT_MEMORY_GB", d.Default.MemoryGB,
			"the memory cap in GB of a tool declaring no memory_gb, and the most a tool not registered by an admin may declare", above(0.0)),
		maxMem: f.float("tool-max-memory-gb", "SCIDEX_TOOL_MAX_MEMORY_GB", d.Max.MemoryGB,
			"the largest memory cap in GB any tool may declare; registration refuses more", above(0.0)),
		defCPUs: f.float("tool-default-cpus", "SCIDEX_TOOL_DEFAULT_CPUS", d.Default.CPUs,
			"the CPUs of a tool declaring no cpu_count, and the most a tool not registered by an admin may declare", above(0.0)),
		maxCPUs: f.float("tool-max-cpus", "SCIDEX_TOOL_MAX_CPUS", d.Max.CPUs,
			"the most CPUs any tool may declare; registration refuses more", above(0.0)),
	}
}

// capLimits reads the cap flags, refusing a maximum below its default (the
// default itself would be refused) and a rescue sooner than the longest wall
// time (a queued call running its full wall time would be presumed dead).
func (t toolFlags) capLimits() (toolspec.CapLimits, error) {
	c := t.caps
	var problems []string
	below := func(maxFlag, maxEnv string, max any, defFlag, defEnv string, def any, what string) {
		problems = append(problems, fmt.Sprintf("--%s=%v (%s): want at least --%s (%s), which is %v (%s)",
			maxFlag, max, maxEnv, defFlag, defEnv, def, what))
	}
	if *c.maxWall < *c.defWall {
		below("tool-max-wall-time", "SCIDEX_TOOL_MAX_WALL_TIME", *c.maxWall, "tool-default-wall-time", "SCIDEX_TOOL_DEFAULT_WALL_TIME", *c.defWall,
			"a tool declaring no wall_time_min runs for the default")
	}
	if *c.maxMem < *c.defMem {
		below("tool-max-memory-gb", "SCIDEX_TOOL_MAX_MEMORY_GB", *c.maxMem, "tool-default-memory-gb", "SCIDEX_TOOL_DEFAULT_MEMORY_GB", *c.defMem,
			"a tool declaring no memory_gb gets the default")
	}
	if *c.maxCPUs < *c.defCPUs {
		below("tool-max-cpus", "SCIDEX_TOOL_MAX_CPUS", *c.maxCPUs, "tool-default-cpus", "SCIDEX_TOOL_DEFAULT_CPUS", *c.defCPUs,
			"a tool declaring no cpu_count gets the default")
	}
	if *t.rescueAfter < *c.maxWall {
		below("tool-rescue-after", "SCIDEX_TOOL_RESCUE_AFTER", *t.rescueAfter, "tool-max-wall-time", "SCIDEX_TOOL_MAX_WALL_TIME", *c.maxWall,
			"a queued call running its full wall time would be presumed dead")
	}
	if len(problems) > 0 {
		return toolspec.CapLimits{}, &configError{problems: problems}
	}
	return toolspec.CapLimits{
		Default: toolspec.CapSet{WallTime: *c.defWall, MemoryGB: *c.defMem, CPUs: *c.defCPUs},
		Max:     toolspec.CapSet{WallTime: *c.maxWall, MemoryGB: *c.maxMem, CPUs: *c.maxCPUs},
	}, nil
}

// queueOpts is the job queue's configuration.
func (t toolFlags) queueOpts() queue.Opts {
	return queue.Opts{Workers: *t.workers, RescueAfter: *t.rescueAfter}
}

// dispatchOpts reads the tool flags; a malformed rate limit, or resource
// caps that contradict each other, stop the start.
func (t toolFlags) dispatchOpts() (dispatch.Opts, error) {
	caps, err := t.capLimits()
	if err != nil {
		return dispatch.Opts{}, err
	}
	limits, err := dispatch.ParseRateLimits(*t.rateLimits)
	if err != nil {
		return dispatch.Opts{}, err
	}
	return dispatch.Opts{Limits: limits, Cache: *t.cache, CacheTTL: *t.cacheTTL, Caps: caps, Budgets: t.budgets(), OnFinish: skills.StoreQueued}, nil
}

// runtimes returns the composition of this build's runtime registry: one
// line per runtime. It runs once the store exists (in-process tools write
// through it).
func (t toolFlags) runtimes(log *slog.Logger, dataDir string, killed func(reason string)) func(*store.Store) (*runtimes.Registry, error) {
	return func(st *store.Store) (*runtimes.Registry, error) {
		datasets := *t.datasetDir
		if datasets == "" {
			datasets = filepath.Join(dataDir, "datasets")
		}
		box, err := t.bwrapRuntime(log, dataDir, killed)
		if err != nil {
			return nil, err
		}
		deps := skills.Deps{Store: st, DatasetDir: datasets, Budgets: t.budgets(), GPUs: *t.gpus, MaxVRAMGB: *t.gpuMaxVRAM}
		if box != nil {
			// The library skills (chem.sar_table) run their workers in it.
			deps.Sandbox = box
		}
		rs := []runtimes.Runtime{tools.Runtime(deps).WithLogger(log), skillcall.New(workpacket.Writer(st))}
		secretStore, err := secrets.Load(secrets.Options{File: *t.secretsFile})
		if err != nil {
			return nil, err
		}
		if names := secretStore.Ungranted(); len(names) > 0 {
			// Names only: an operator sees which secrets no tool may use.
			log.Warn("secrets granted to no tool: an http_post tool naming one is refused until the secrets file grants it to the tool and its host:port",
				"secrets", strings.Join(names, ","))
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
		if box != nil {
			rs = append(rs, box)
		}
		return runtimes.NewRegistry(rs...)
	}
}

// bwrapRuntime is the bwrap runtime, or nil when this server cannot run
// one (no bubblewrap): a warning is logged and everything else is served.
func (t toolFlags) bwrapRuntime(log *slog.Logger, dataDir string, killed func(reason string)) (*bwrap.Runtime, error) {
	// The sandbox user must traverse the cache: the data dir (often under
	// a private home) first, then a system cache directory.
	caches := []string{*t.bwrapCache}
	if *t.bwrapCache == "" {
		caches = []string{filepath.Join(dataDir, "bwrap-cache"), filepath.Join("/var/cache/scidex", "bwrap"), filepath.Join(os.TempDir(), "scidex-bwrap-cache")}
	}
	if *t.bwrapShim != "" {
		if fi, err := os.Stat(*t.bwrapShim); err != nil || !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("--bwrap-egress-shim %q: not a program file", *t.bwrapShim)
		}
	}
	shim := egressShim(*t.bwrapShim)
	if shim == "" {
		log.Warn("no scidex-egress-shim found (--bwrap-egress-shim): bwrap tools asking for the network will be refused")
	}
	var boxErr error
	for _, cache := range caches {
		box, err := bwrap.New(bwrap.Options{CacheDir: cache, UID: *t.bwrapUID, GID: *t.bwrapGID, GPUs: *t.gpus, Logger: log,
			EgressShim: shim, EgressAllow: splitList(*t.httpAllow), CacheBytes: int64(*t.bwrapCacheM) << 20,
			MemoryBytes: int64(*t.caps.defMem * (1 << 30)), WallTime: *t.caps.defWall, KilledFunc: killed})
		if err != nil {
			boxErr = errors.Join(boxErr, err)
			continue
		}
		log.Info("bwrap runtime", "cache", cache, "enforcement", fmt.Sprintf("%+v", box.Enforcement()))
		return box, nil
	}
	// A server without bubblewrap still serves everything else; a bwrap
	// tool is then refused at registration, naming the runtimes it has, and
	// chem.sar_table refuses to run.
	log.Warn("the bwrap runtime is off: sandboxed tools will not run", "err", boxErr)
	return nil, nil
}

// egressShim is the egress shim to use: the flag's, else scidex-egress-shim
// beside this binary, else in PATH; "" when there is none.
func egressShim(flag string) string {
	if flag != "" {
		return flag
	}
	const name = "scidex-egress-shim"
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}
