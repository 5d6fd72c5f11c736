// Package benchkit is what the benchmark commands under bench/ share: the
// setup that brings up what is measured, and the small helpers around a
// measurement. It holds no measurement of its own; each command keeps its load
// generator, its figures and its output lines.
//
// A command builds (or is given) the scidex binary, starts it on a fresh
// embedded PostgreSQL cluster in a scratch directory (Start), mints a token
// with the secret the server was given (Token), and talks to it over one
// http.Client of its own, whose settings are part of the command's
// measurement, with Post and GQL. Post does no more per request than a load
// generator must (the body is built by the caller, once where it can be), so
// that the machine's cores go to the server and the database. Load is the
// closed loop of concurrent clients with a warm-up before a measured window
// that several commands drive their requests through.
//
// Everything Start and StartServer bring up is registered with AtExit and
// undone in reverse order by Cleanup, which a command defers and which Fail
// runs too: a benchmark that fails half way leaves no server or cluster
// running. Fail and Check end the command on an error it cannot go on from,
// which is every error in a benchmark's setup.
//
// The rank statistics are the ones bench/RESULTS.md was measured with
// (Median, Percentile): changing them would make new figures incomparable
// with the recorded ones, so a command whose figures were taken another way
// keeps its own.
package benchkit
