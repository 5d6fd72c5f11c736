// Package metrics owns the substrate's Prometheus metrics: every metric is
// defined here, in one private registry (never the global default one), with
// the Go runtime and process collectors beside them, and served by Handler on
// the operator's --metrics-addr, a listener of its own, never the public one.
//
// The package imports nothing of the substrate. The packages that do the work
// (the event hub, the dispatcher, the job queue, the MCP server, the bwrap
// runtime) each declare the small interface or function they report through,
// and hold nil when metrics are off: then nothing is recorded and nothing is
// paid for beyond a nil check. *Metrics implements all of those interfaces,
// and every method of it is safe on a nil *Metrics.
//
// Label values are bounded, whoever sends the request: HTTP requests are
// labelled by route (from a fixed list), method and status code; GraphQL
// operations by their type and root field (a field of the schema, since the
// document was validated against it), never by the client's operation name;
// errors by the API's closed set of codes; tool and MCP tool names, which
// contributors can register without limit, are kept for the first MaxNames
// distinct names and counted as "other" after. No metric carries an actor,
// an artifact id, a token or a request id.
package metrics
