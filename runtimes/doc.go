// Package runtimes is the seam between the tool dispatcher and the places a
// tool actually runs.
//
// The substrate owns a tool's control plane: its catalog entry (a tool
// artifact), argument and result schemas, caps, cost model and the ledger of
// its calls (tool_call artifacts). Execution is somebody else's: a compiled-in
// Go function, an HTTP endpoint, a program in a bubblewrap sandbox, a tool on
// an MCP server, or an agent that claims a work packet. Each of those is a
// Runtime, one package under runtimes/, behind the one small interface in this
// file: given the tool and its (already validated) arguments, run it and say
// what came out.
//
// Runtimes are registered explicitly where the server is composed (cmd/scidex,
// through a Registry); nothing registers itself from an init function, so the
// build's runtimes are visible in one place and a test can compose exactly the
// ones it needs. Adding a runtime is one package and one Register line.
//
// A Runtime never sees the database, the caller's token or any secret it was
// not given at construction. What it returns is checked by the dispatcher, not
// trusted: the output is validated against the tool's output_schema, its size is
// capped, and a failure is classified by the *Error it returns (a setup failure
// — the sandbox would not start, the server is unreachable — is told apart from
// the tool's own failure). runtimetest is the conformance suite every runtime
// passes.
package runtimes
