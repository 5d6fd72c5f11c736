package runtimes

import (
	"errors"
	"fmt"
)

// Codes say why a call failed, in the tool_call's error.code. The set is open
// (a runtime may add its own) but these mean the same everywhere.
const (
	// CodeToolError: the tool ran and reported a failure (a non-zero exit,
	// an MCP isError result, an HTTP 4xx/5xx).
	CodeToolError = "tool_error"
	// CodeBadOutput: the tool's output is not one JSON value.
	CodeBadOutput = "bad_output"
	// CodeOutputTooLarge: the output passed the size cap and was cut.
	CodeOutputTooLarge = "output_too_large"
	// CodeWallTimeout: the call outlived its wall time and was killed.
	CodeWallTimeout = "wall_timeout"
	// CodeMemoryLimit, CodeCPULimit, CodePidsLimit, CodeDiskLimit: a resource
	// cap was hit and the tool killed or refused.
	CodeMemoryLimit = "memory_limit"
	CodeCPULimit    = "cpu_limit"
	CodePidsLimit   = "pids_limit"
	CodeDiskLimit   = "disk_limit"
	// CodeCancelled: cancelToolCall (or the caller going away) stopped it.
	CodeCancelled = "cancelled"
	// CodeSetupFailed: the runtime could not start the tool (the sandbox did
	// not come up, the bundle is missing or altered).
	CodeSetupFailed = "sandbox_setup_failed"
	// CodeUnreachable: the remote end (HTTP endpoint, MCP server) could not be
	// reached.
	CodeUnreachable = "unreachable"
	// CodeRefused: the runtime refused the call before running anything (an
	// address the outbound guard forbids, a redirect, a backend this server
	// has not configured).
	CodeRefused = "refused"
	// CodeBundleAltered: a bundle file no longer matches its registered hash.
	CodeBundleAltered = "bundle_altered"
	// CodeSecretInOutput: the tool's answer held a secret the call carried
	// (as sent, JSON-escaped, base64, hex or URL-encoded): none of the
	// output is recorded, not even an excerpt, so that no reader of the
	// call sees the secret.
	CodeSecretInOutput = "secret_in_output"
	// CodeInternal: the tool failed in a way the caller is not shown (a
	// panic, a database or file-system error): the message is generic and
	// the cause is in the server's log under the call's id.
	CodeInternal = "internal_error"
)

// Error is a call's failure, as the tool_call records it. Setup tells a
// failure to start or reach the tool (the operator's to fix, or transient)
// from the tool's own failure (the caller's or the tool author's).
type Error struct {
	Code    string
	Message string
	Setup   bool
	// Details carries structured facts (exit code, signal, HTTP status, peak
	// memory) safe to show the caller. Never a secret.
	Details map[string]any
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf makes an *Error.
func Errorf(code string, setup bool, format string, args ...any) *Error {
	return &Error{Code: code, Setup: setup, Message: fmt.Sprintf(format, args...)}
}

// With adds a detail and returns e.
func (e *Error) With(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// AsError returns err as an *Error: itself when it is one, else a setup
// failure carrying err's message.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeSetupFailed, Setup: true, Message: err.Error()}
}
