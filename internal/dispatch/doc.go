// Package dispatch is the tool dispatcher: the control plane between
// invokeTool and the runtimes that execute tools.
//
// A tool is an artifact (tool:<name>) whose content says which runtime runs
// it and how; a call is a tool_call artifact, a ledger only the server writes.
// Invoke is the seven steps of docs/tools.md, in order: load the tool (the
// latest version, or the one pinned), authorize the caller (only active tools
// run, except that a draft runs for its author and admins), validate the
// arguments against input_schema (a refusal writes nothing), record the call
// as running with a tool_call.started event, run it in its runtime, check the
// output against output_schema (violations are recorded, never dropped), and
// finish the record — status, result, error, actuals, cost — with
// tool_call.completed or tool_call.failed and, when the call cost anything, an
// agent.budget_debited event only the caller sees.
//
// The dispatcher owns the policy around a call too: per-actor, per-tool rate
// limits, the opt-in result cache for deterministic tools, and the queue for
// calls that run asynchronously. It never runs an agent: the skill_call
// runtime writes a work packet for one to claim, and the call waits, queued,
// while an agent holds the packet on a lease (workpacket*.go: claim, report
// progress, complete); completing the packet finishes the call.
//
// The ledger never leaves a call running (finish.go): every call names the
// process running it, whose heartbeat (internal/queue) says it is alive, and
// every process sweeps for the calls of processes that stopped and for work
// packets nobody completed in time (Sweep). Every finish goes through one
// transition, end, and a finish that cannot be written writes a minimal
// failed record instead.
package dispatch
