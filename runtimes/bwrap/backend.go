package bwrap

import (
	"context"

	"github.com/scidex/substrate/runtimes"
)

// Backend is a place a sandboxed tool runs: bubblewrap on this machine (the
// one implementation here), or, later, a docker daemon, a batch system or a
// Kubernetes cluster. The runtime does what is the same for all of them
// (decode and check runtime_config, materialize and verify the bundle) and
// hands the backend a prepared Sandbox; the backend starts it, enforces the
// caps and reports what came out.
type Backend interface {
	// Name is the value of a tool's sandbox_backend this backend serves.
	Name() string
	// Check reports what only this backend knows about a tool (an image it
	// cannot pull, a cap it cannot enforce).
	Check(t *runtimes.Tool) []runtimes.Problem
	// Run runs one call and returns its output, or a *runtimes.Error.
	Run(ctx context.Context, s *Sandbox) (*runtimes.Result, error)
}

// Sandbox is one call as the runtime prepared it for a backend.
type Sandbox struct {
	// ID names the call (the tool_call id) in logs and cgroup names.
	ID string
	// BundleDir is the host directory of the verified bundle, read-only to
	// the sandbox.
	BundleDir string
	// Command is the program, relative to the bundle, and its arguments.
	Command []string
	// DataPaths are bundle-relative directories also exposed under /data.
	DataPaths []string
	// Caps are the tool's caps with this server's defaults filled in.
	Caps runtimes.Caps
	// Image is the tool's sandbox_image (for backends that run images).
	Image string
	// Stdin is what the program reads: the call's JSON arguments.
	Stdin []byte
	// Progress receives the tool's progress reports; never nil.
	Progress func(runtimes.Progress)
}
