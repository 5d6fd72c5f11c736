// Package mcp is the substrate as an MCP server, generated from GraphQL
// operation documents, so that AI agents (Claude Code, Codex, any MCP client)
// reach the API with no second implementation that could drift from it.
//
// The source is the folder operations/: one named GraphQL operation per file,
// its description in the # comment lines at its top. Each document is
// validated against the executor's own schema (graph.NewExecutableSchema, the
// one /graphql validates against) when the server is built, and becomes one
// tool:
//
//   - name: the operation name in snake_case (GetArtifact → get_artifact),
//     which must be the file's name;
//   - description: the comment, then the schema's description of the root
//     field;
//   - input schema (JSON Schema 2020-12): one property per variable, from its
//     type: scalars, enums as string enums, input objects written out with
//     their fields' descriptions, lists, non-null without default → required;
//     Ref a string with the ref pattern, DateTime format date-time, JSON any
//     value;
//   - output schema: the selection set's shape (aliases, fragments, unions
//     and interfaces as oneOf by __typename, nullable fields admitting null),
//     in keywords draft-07 validators read the same way;
//   - annotations: a query is readOnly and idempotent; a mutation is not, and
//     supersede* is destructive.
//
// A call is checked against the input schema here (the SDK's raw handlers
// check nothing; a refusal names each path), then sent in process to the
// server's own /graphql handler as an HTTP request carrying the caller's
// Authorization: token verification, the request context, body, depth, cost
// and response limits, rate limits and the write journal are those of any
// GraphQL request, because it is one. The data is the structured content; a
// union member such as VersionConflict (with its merge hint) or
// ValidationFailed is data an agent acts on; GraphQL errors and HTTP refusals
// are isError results with each error's code and message.
//
// Mutations are configurable (Options.Mutations: none, listed, all) and never
// listed for a caller without the contributor permission; such a caller's call
// of one is refused with PERMISSION_DENIED before anything runs. The execute
// (ad-hoc GraphQL) and schema (SDL) tools are optional.
//
// Artifacts are resources, scidex://<type>/<id>, read by the get_artifact
// document; a subscription is told of each change from the event log (the
// app calls ArtifactChanged; Run notifies). See resources.go.
//
// Transports: ServeHTTP is /mcp, streamable HTTP, stateless (each request
// stands alone, its bearer token the identity; only stateless negotiates the
// 2026-07-28 revision); RunStdio is `scidex mcp`, the token from SCIDEX_TOKEN.
//
// The generated tool list is pinned in testdata/tools.golden.json.
package mcp

//go:generate go run ./golden
