// Package queue runs asynchronous tool calls on River, a job queue in
// PostgreSQL: durable (a job is a row, committed with the tool_call that asks
// for it), worked by any server process or `scidex worker` attached to the
// same database, retried as the tool declares, and rescued when the process
// working it dies.
//
// The dispatcher (internal/dispatch) owns what a job means; this package
// owns only how jobs move, and imports nothing of the dispatcher: a Job is
// the call's id, its caller and its wall time, and the dispatcher is bound
// to the worker as its Runner. Enqueue inserts a job in the caller's
// transaction (River's InsertTx on the store's Tx), so the queued tool_call
// and its job commit or roll back together. Each job runs the dispatcher's
// RunQueued with the attempt River counts. A job whose worker was killed is rescued after
// RescueAfter and started again: RunQueued then finds its call still running
// and either runs it again (an idempotent tool with retries left) or records
// it as failed with the reason — never left running.
//
// Worker liveness is this package's too: every process that runs calls,
// synchronous ones included, beats in tool_workers on its own ticker
// (Heartbeat), and the dispatcher asks Liveness whether a process is alive
// and which running calls name one that is not.
//
// River's tables are migrated with ours (Migrate, called under the same
// migration lock), and River listens for new jobs on its own connection:
// like the event hub's LISTEN, it needs a direct connection to PostgreSQL,
// not a transaction pooler (Opts.Listen; River's queries themselves work
// through one, e.g. PgBouncer in transaction mode).
package queue
