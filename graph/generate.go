// Package graph holds the GraphQL schema (*.graphqls) and the executable code
// gqlgen generates from it. Generated files are output only: change the schema,
// the schema documents or the queries and run `go generate ./...`.
package graph

// Order matters: sqlc's output is imported by the resolvers gqlgen loads, and the
// typed subtypes typegen writes are part of the schema gqlgen reads. sqlc is
// pinned in a module of its own (internal/tools/sqlc), so that its parsers and
// drivers stay out of this module's graph.
//go:generate sh -c "cd .. && go tool -modfile=internal/tools/sqlc/go.mod sqlc generate"
//go:generate sh -c "cd .. && go run ./cmd/typegen"
//go:generate sh -c "cd .. && go run ./cmd/gqlgen"
