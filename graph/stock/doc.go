// Package stock is gqlgen's executor for the schema exactly as gqlgen writes
// it, before cmd/gqlgen rewrites the copy in package graph for speed (lists
// in order, plain fields straight from the object, @defer groups when
// needed). It exists for tests: the differential test of internal/server
// runs the server's queries through both executors on the same database and
// compares the responses, and an executor that must run every field through
// gqlgen's field middleware (a graphql.FieldInterceptor) can be this one.
// The server binary does not import it (internal/policy checks).
//
// Everything here but this file is written by cmd/gqlgen (`go generate
// ./...`): the *.generated.go files are gqlgen's output with the package
// clause changed, the *.graphqls files are copies of graph/*.graphqls for
// the executor to embed, and New builds the executor on package graph's
// configuration. Change the schema in graph/, never here.
package stock
