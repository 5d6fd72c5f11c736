// Package dispatch is the tool dispatcher: the call state machine between
// invokeTool and the runtimes that execute tools.
//
// A tool is an artifact (tool:<name>) whose content (internal/toolspec's
// Manifest) says which runtime runs it and how; a call is a tool_call
// artifact, a ledger only the server writes. Invoke is the seven steps of
// docs/tools.md, in order: load the tool (the latest version, or the one
// pinned), authorize the caller (only active tools run, except that a draft
// runs for its author and admins), validate the arguments against
// input_schema (a refusal writes nothing), record the call as running with a
// tool_call.started event, run it in its runtime, check the output against
// output_schema (violations are recorded, never dropped), and finish the
// record — status, result, error, actuals, cost — with tool_call.completed
// or tool_call.failed and, when the call cost anything, an
// agent.budget_debited event only the caller sees.
//
// The dispatcher owns the policy around a call too: per-actor, per-tool rate
// limits, the opt-in result cache for deterministic tools, usage counts, the
// budget hold and settle (internal/budget), progress, cancellation, and the
// queue protocol for calls that run asynchronously (RunQueued; the queue
// itself, and which processes are alive, are internal/queue's).
//
// The ledger never leaves a call running (finish.go): every call names the
// process running it, whose heartbeat (internal/queue) says it is alive, and
// every process sweeps for the calls of processes that stopped (Sweep).
// Every finish goes through one transition, end, and a finish that cannot be
// written writes a minimal failed record instead.
//
// What it does not own: registration and review (internal/toolreg, which
// checks every tool write through the store's hook) and the work packets a
// skill_call's call waits on (internal/workpacket, which finishes the call
// through Finish and takes its step of every sweep as the Awaiter:
// waiting.go). It imports neither of them, nor the API (graph, resolvers) nor
// the composition root (internal/app): they import it
// (internal/policy/imports_test.go holds this).
package dispatch
