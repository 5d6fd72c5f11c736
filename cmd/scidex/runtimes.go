package main

import (
	"time"

	"github.com/scidex/substrate/internal/dispatch"
	"github.com/scidex/substrate/internal/queue"
	"github.com/scidex/substrate/internal/store"
	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/inprocess"
	"github.com/scidex/substrate/runtimes/skillcall"
	"github.com/scidex/substrate/tools"
)

// toolFlags configure the tool dispatcher and its runtimes.
type toolFlags struct {
	rateLimits  *string
	cache       *bool
	workers     *int
	rescueAfter *time.Duration
}

func addToolFlags(f flags) toolFlags {
	return toolFlags{
		rateLimits: f.str("tool-rate-limits", "SCIDEX_TOOL_RATE_LIMITS", "",
			`per-actor, per-tool rate limits of invokeTool, JSON: {"<tool name or *>": {"rate": <calls per second>, "burst": <calls>}}`),
		cache:   f.boolean("tool-cache", "SCIDEX_TOOL_CACHE", false, "answer deterministic tools from the result cache of earlier identical calls"),
		workers: f.integer("tool-workers", "SCIDEX_TOOL_WORKERS", 4, "queued tool calls this process works at once; 0 leaves them to `scidex worker`", atLeast(0)),
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
	return dispatch.Opts{Limits: limits, Cache: *t.cache}, nil
}

// buildRuntimes is this build's runtime registry: one line per runtime.
func buildRuntimes(st *store.Store) (*runtimes.Registry, error) {
	return runtimes.NewRegistry(
		inprocess.New(tools.InProcess(st)),
		skillcall.New(st),
	)
}
