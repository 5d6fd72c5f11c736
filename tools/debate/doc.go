// Package debate is SPEC-001 §7.4's debate verbs as tools: debate.start
// opens a debate_session on a topic among personas for k rounds, and every
// turn of it is a work packet (the debate.turn skill_call tool) an agent
// claims and answers with debate.argue; debate.replay reads the transcript.
//
// The state of a debate is durable, never in memory: the rounds are
// debate_round artifacts whose ids are the session's id and the turn's
// number (<session id>.<turn>), so a turn can be answered once only (a
// second answer collides on the id and appends nothing), and the session's
// content names the turn whose packet is out (turn: {number, packet}). The
// next packet is issued right after a round is appended, by the call that
// appended it, through the dispatcher under an idempotency key naming the
// session and the turn, so two answers racing, or a retry after a restart,
// issue one packet; whatever call finds the session's turn behind its rounds
// (debate.argue, debate.replay) issues the missing packet the same way.
//
// The verbs' functions are built with the runtimes, before the dispatcher
// that runs them exists: the composition binds the dispatcher and the work
// packets to the store once both exist (Bind, from the server's start hook).
package debate
