// Package mcpserver is the mcp_server runtime: a substrate tool whose work is
// done by a tool on an MCP server that the operator registered, called
// through the official MCP Go SDK client.
//
// The operator, not the tool's author, decides which servers exist: a server
// is a name in Options.Servers (loaded from a JSON file, see LoadServers),
// either a command started as a child process and spoken to over stdio, or a
// streamable HTTP endpoint. A tool's runtime_config can only name one of them
// and a tool on it:
//
//	{"server": "textkit", "tool_name": "text_stats", "timeout_ms": 5000}
//
// so registering a tool never starts a program or reaches an address the
// operator did not list. Check refuses an unknown server (naming the
// configured ones), a missing tool_name and any other field. Check does not
// connect: whether the server really has tool_name is found out by the first
// call, which then fails with a message naming the tool and listing the ones
// the server offers.
//
// # Sessions
//
// Each server has at most one MCP session (one child process, or one HTTP
// session), connected lazily by the first call and shared by every call after
// it: the SDK multiplexes concurrent requests over it. The connect runs on the
// runtime's behalf, bounded by Options.ConnectTimeout, and every call that
// needs the session meanwhile waits for that one connect; a call that stops
// waiting (cancelled, out of wall time) returns at once and leaves the
// handshake to serve the next.
//
// A session that has died is replaced, once per call. A stdio server that has
// exited is noticed before the call is sent (waitid, without reaping it). A
// call is never sent twice once it may have been delivered: it is retried on
// a new session only when its request certainly never reached the server
// (delivery.go): the SDK refused a closed session before sending, the dial
// failed, the HTTP server answered the POST "session not found" (it
// restarted), or the write of a request the pipe takes atomically failed. A
// connection that breaks once the request may have gone out (the server died
// reading it, the response stream broke and its resumption found the session
// gone) fails that call with CodeUnreachable, since the server may have run
// it; the next call reconnects. Close ends every session and child process; the server calls it
// on shutdown.
//
// A stdio server starts in its own process group with a clean environment:
// PATH, HOME, LANG and TMPDIR from the substrate's environment and the
// server's Env, nothing else, so the substrate's own secrets (its database
// URL, its signing key) never reach a third-party program. When its session
// ends the whole group is killed, so a server that forked helpers leaves none
// behind. Its stderr goes to the runtime's logger.
//
// # Results
//
// A tools/call result becomes the substrate tool's output like this:
//
//   - isError: true fails the call with CodeToolError and the server's text
//     content as the message (cut to 2000 bytes);
//   - structuredContent, when present, is the output. The SDK decodes it into
//     Go values, which would round large integers through float64; when the
//     result also carries a single text content holding the same JSON (as
//     servers built on a typed SDK handler do), that text is passed on
//     instead, byte for byte;
//   - else a single text content that parses as JSON is the output;
//   - else the output is {"content": [...]}, the content list as MCP gives it.
//
// An output over Options.MaxOutputBytes fails with CodeOutputTooLarge. A
// JSON-RPC error from the server fails with CodeToolError, except an unknown
// tool, which is a setup failure (CodeRefused) naming it.
//
// # Limits
//
// The call's wall time is the smaller of resource_caps.wall_time and
// runtime_config.timeout_ms; past it the call fails with CodeWallTimeout. A
// cancelled context fails it with CodeCancelled at once; in both cases the SDK
// sends notifications/cancelled so the server can stop. Memory, CPU and
// network caps are not enforced here: the MCP server runs outside the
// substrate, under whatever limits its operator gave it. Progress the server
// reports for the call (notifications/progress with the call's progress
// token) reaches Call.Progress.
//
// When Close cancels running calls, the SDK's notifications/cancelled (sent
// in the background) can lose the race with the session's close; the server
// then learns from the session ending (its stdin closed, the HTTP session
// deleted), which is also what stops a stdio server.
package mcpserver
