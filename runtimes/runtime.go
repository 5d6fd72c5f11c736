package runtimes

import (
	"context"
	"encoding/json"
	"io"
	"time"
)

// Runtime runs tools of one kind (the tool artifact's `runtime` field).
type Runtime interface {
	// Name is the value of a tool's `runtime` this runtime serves
	// (in_process, http_post, bwrap, mcp_server, skill_call).
	Name() string
	// Check inspects a tool at registration (and again at dispatch) for what
	// only this runtime knows: that runtime_config names a registered
	// function, a URL it may post to, a server the operator configured, that
	// the caps asked for can be enforced here. Each problem names the field of
	// the manifest it is about. No problem means the runtime can run the tool.
	Check(t *Tool) []Problem
	// Run executes one call. ctx ends it: on cancellation or deadline the
	// runtime stops the work (kills the sandbox, drops the connection) and
	// returns promptly. A call that ran and failed returns an *Error; any
	// other error is treated as a setup failure of the runtime.
	Run(ctx context.Context, c *Call) (*Result, error)
}

// ArgsChecker is implemented by a runtime that can check a call's arguments
// beyond the tool's input_schema before anything runs or is recorded (an
// in_process skill refusing a dose without a unit, naming the field): the
// dispatcher refuses the call with these problems and writes nothing.
type ArgsChecker interface {
	CheckArgs(t *Tool, args json.RawMessage) []Problem
}

// Problem is one thing wrong with a tool for a runtime, at a JSON pointer-ish
// path of its manifest (runtime_config.function, resource_caps.vram_gb).
type Problem struct {
	Path       string
	Constraint string
	Message    string
	// Value is the JSON received at Path and Suggestion a valid replacement,
	// when the runtime knows them (an argument check).
	Value      json.RawMessage
	Suggestion string
}

// Tool is what a runtime is told of the tool it runs: the fields of the tool
// artifact's content that matter to execution, decoded.
type Tool struct {
	// Ref is the pinned ref of the tool version that runs.
	Ref     string
	Name    string
	Version string
	Runtime string
	// Config is runtime_config as registered: each runtime decodes its own.
	Config json.RawMessage
	Caps   Caps
	// SandboxBackend is bwrap unless the tool asks for docker, batch or k8s.
	SandboxBackend string
	SandboxImage   string
	// Files are the bundle's files as registered (path and sha256); Bundle
	// gives their bytes. A runtime that uses them checks each hash.
	Files  []File
	Bundle Bundle
}

// Caps are a tool's resource caps (its `resource_caps`), with defaults filled
// in by the dispatcher. A runtime enforces those it can and refuses, in Check,
// a tool asking for one it cannot honour (vram on a server with no GPU).
type Caps struct {
	WallTime    time.Duration
	MemoryBytes int64
	CPUCount    float64
	VRAMGB      float64
	// Network is deny (the default), allow, or specific (AllowedHosts only).
	Network      string
	AllowedHosts []string
}

// File is one file of a tool bundle.
type File struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size,omitempty"`
}

// Bundle gives the bytes of a tool's files. The reader's content is what was
// stored; the runtime verifies it against File.SHA256 before using it.
type Bundle interface {
	Open(ctx context.Context, f File) (io.ReadCloser, error)
}

// Call is one invocation.
type Call struct {
	Tool *Tool
	// Args are the arguments, already valid against the tool's input_schema.
	Args json.RawMessage
	// ID is the tool_call's id: a runtime may use it to name a run directory
	// or correlate logs. Actor is the id of the actor the call is made for.
	ID    string
	Actor string
	// Progress, when not nil, reports progress of a running call; it returns
	// promptly and may be called from any goroutine.
	Progress func(Progress)
}

// Progress is a running call's report of how far it has got.
type Progress struct {
	// Fraction is 0..1 when the tool knows it.
	Fraction *float64       `json:"fraction,omitempty"`
	Message  string         `json:"message,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
}

// Result is what a call that ran produced.
type Result struct {
	// Output is the tool's JSON result. The dispatcher validates it; a
	// runtime passes it on as the tool gave it.
	Output json.RawMessage
	// PeakMemoryBytes and CPUTime are measured actuals, 0 when unknown.
	PeakMemoryBytes int64
	CPUTime         time.Duration
	// Pending is set by a runtime whose work finishes later, outside it (the
	// skill_call runtime's work packet): the call stays queued until the work
	// is completed. ResultRef then names the artifact that tracks the work.
	Pending   bool
	ResultRef string
}

// MaxOutputBytes is the default cap on a tool's output (it must fit, with its
// arguments, in a tool_call artifact, whose content is at most 1 MiB): a runtime reading
// more refuses with CodeOutputTooLarge rather than hold it.
const MaxOutputBytes = 512 << 10

// ReadCapped reads r to the end, or fails with CodeOutputTooLarge past max bytes.
func ReadCapped(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, Errorf(CodeOutputTooLarge, false, "the tool's output is larger than %d bytes", max)
	}
	return b, nil
}
