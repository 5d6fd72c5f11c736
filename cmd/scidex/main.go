// Command scidex is the SciDEX substrate: one server with one GraphQL API over
// PostgreSQL. Subcommands:
//
//	scidex serve     run the server (on an embedded PostgreSQL unless DATABASE_URL is set)
//	scidex migrate   apply the database migrations and seed the schema registry
//	scidex token     mint a development token for an actor
//	scidex tool      register a tool from its bundle: scidex tool register tools/<name>/
//	scidex worker    work queued tool calls only (no HTTP)
//	scidex skills    check-references: the skills' references gate (CI runs it)
//	scidex mcp       the substrate as an MCP server on stdio (token from SCIDEX_TOKEN)
//	scidex documents the trusted documents of production mode: push, list
//	scidex schema    upgrade <type>: a type's artifacts stored at its current schema version
//
// Every flag also reads an environment variable; `scidex <command> -h` lists them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:])
	case "migrate":
		err = migrateCmd(ctx, args[1:])
	case "token":
		err = tokenCmd(args[1:])
	case "tool":
		err = toolCmd(ctx, args[1:])
	case "worker":
		err = workerCmd(ctx, args[1:])
	case "skills":
		err = skillsCmd(args[1:])
	case "mcp":
		err = mcpCmd(ctx, args[1:])
	case "documents":
		err = documentsCmd(ctx, args[1:])
	case "schema":
		err = schemaCmd(ctx, args[1:])
	default:
		fmt.Fprintf(os.Stderr, "scidex: unknown command %q\n\n", args[0])
		usage()
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 2
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "scidex %s: %v\n", args[0], err)
		var bad *configError
		if errors.As(err, &bad) {
			return 2 // as for a bad flag: the command never started
		}
		return 1
	}
	return 0
}

func usage() {
	fmt.Fprint(os.Stderr, `scidex: the SciDEX substrate

Usage:
  scidex serve     run the server (embedded PostgreSQL unless DATABASE_URL is set)
  scidex migrate   apply migrations and seed the schema registry, then exit
  scidex token     print a development token: scidex token --sub alice --kind human --permissions contributor
  scidex tool      register a tool: SCIDEX_TOKEN=… scidex tool register tools/<name>/ (--runtime, --config for external tools)
  scidex worker    work queued tool calls, with no HTTP listener (any number, on the server's database)
  scidex skills    check-references: fail when a preview or available skill depends on a to_verify reference
  scidex mcp       the substrate as an MCP server on stdio: SCIDEX_TOKEN=… scidex mcp (database as serve configures it)
  scidex documents register the operations a production server runs for non-admins: scidex documents push ops/*.graphql; list
  scidex schema    upgrade <type>: store a type's artifacts at its current schema version, in batches (resumable)

Run "scidex <command> -h" for a command's flags; every flag also reads an environment variable.
`)
}
