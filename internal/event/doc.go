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
//
// Where a reader begins: after its since, else after its durable consumer's
// stored cursor, else where From says (Consumers.Start). FromNow, the default,
// is the end of the log as it is now; FromStart is the zero cursor, before every
// event, which the event spec gives a new durable consumer (docs/events.md). From the zero cursor a
// subscription replays the whole log its actor may see through the same catch-up
// path as any since: a page of 500 events at a time, each page stopping at the
// horizon, so nothing is held in memory beyond a page and the subscriber's
// buffer, and nothing committed late is passed; it joins the live stream where
// the replay meets the hub's position.
package event
