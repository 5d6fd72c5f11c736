// Package skillcall is the skill_call runtime: a tool whose work an agent
// does, not the server. The substrate never runs an agent; calling such a
// tool writes an agent_work_packet artifact (which skill, in which persona,
// with what instructions, on the call's arguments, within which budget and
// step limit) and leaves the call QUEUED. An agent runtime finds the packet
// with the workPackets query, claims it with a lease (claimWorkPacket) and
// hands back its result artifacts (completeWorkPacket), which finishes the
// tool call; internal/workpacket does that part, finishing the call through
// the dispatcher.
//
// runtime_config is decoded strictly:
//
//	{"skill": "literature.evidence_review", "persona": "skeptic",
//	 "instructions": "What to do and what to hand back (markdown).",
//	 "max_steps": 20, "budget_usd": 0.5}
//
// skill and instructions are required; anything else is refused when the
// tool is registered and again when it is called.
//
// Unlike the other runtimes, this one writes: the packet is the whole of its
// work. It never sees the database either: it writes through Packets, which
// the composition supplies over the store's server write as part of the
// caller's invokeTool (so the packet is the caller's and its tool_call field,
// which only invokeTool may set, links it to the call), and it has nothing
// else of the store. The packet's id is the call's id, so
// a call retried after a worker died finds the packet its first attempt
// wrote instead of writing a second.
package skillcall
