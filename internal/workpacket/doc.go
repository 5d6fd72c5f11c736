// Package workpacket is the work packet lifecycle: the agent_work_packet a
// skill_call tool's call writes (through Writer, the skill_call runtime's
// only view of the store) and waits on, QUEUED; an agent claims the packet
// on a lease (Claim), may report progress (Progress, which renews the lease
// and tells the call's watchers), and completes it (Complete), which
// finishes the call. A lease is only a timestamp in the packet: a claim
// whose lease_expires_at has passed is claimable again, so a dead agent's
// packet returns to the pool without a sweeper. Every write is an
// optimistic update of the packet, so of two agents claiming one packet the
// second gets a VERSION_CONFLICT.
//
// A packet nobody completes in time fails its call packet_expired (Expire,
// run by the dispatcher's sweep), and a call cancelled or lost cancels its
// packet (Abandon): New registers the packets with the dispatcher as the
// owner of the work its calls wait on (dispatch.Awaiter).
//
// Every finish of a call — completed, failed, expired — goes through the
// dispatcher's one transition (dispatch.Finish, then end): this package
// writes the packet, never a call's record. It may import the dispatcher;
// the dispatcher never imports it, nor does registration (internal/toolreg).
package workpacket
