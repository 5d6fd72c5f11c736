// Package event delivers the event log to clients: live, over one LISTEN
// connection per process and a hub that fans each new event out to every
// matching subscriber, and durably, by paging the log from a cursor (poll, and the
// backlog of a subscription started with since).
//
// Nothing committed is ever skipped. Event ids come from a sequence, so they are
// handed out in one order and committed in another; a reader that resumes from
// "id > cursor" would miss a row that committed late. Events are therefore
// ordered by (xid, id), xid being the writing transaction's id, and an event is
// handed out only once every transaction older than it has ended: its xid must be
// below the horizon, the oldest transaction id still running. A cursor is an
// (xid, id) pair. Delivery is at least once; consumers are idempotent.
package event
