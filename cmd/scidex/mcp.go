package main

import (
	"context"
	"fmt"
	"os"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/mcp"
	"github.com/scidex/substrate/internal/server"
)

// mcpFlags configure the MCP tools, on /mcp (serve) and on stdio (mcp).
type mcpFlags struct {
	mutations *string
	execute   *bool
	schema    *bool
}

func addMCPFlags(f flags) mcpFlags {
	return mcpFlags{
		mutations: f.str("mcp-mutations", "SCIDEX_MCP_MUTATIONS", string(mcp.MutationsListed),
			"which mutations MCP agents may run: none, listed (the mutation operation documents) or all (execute runs any mutation too)",
			oneOf(string(mcp.MutationsNone), string(mcp.MutationsListed), string(mcp.MutationsAll))),
		execute: f.boolean("mcp-execute", "SCIDEX_MCP_EXECUTE", true, "offer MCP agents the execute tool (ad-hoc GraphQL, under the same limits)"),
		schema:  f.boolean("mcp-schema", "SCIDEX_MCP_SCHEMA", true, "offer MCP agents the schema tool (the SDL, or one type's definition)"),
	}
}

func (m mcpFlags) options() mcp.Options {
	return mcp.Options{Mutations: mcp.Mutations(*m.mutations), Execute: *m.execute, Schema: *m.schema}
}

// mcpCmd runs `scidex mcp`: the substrate as an MCP server on stdin and
// stdout, for an agent that starts it as a subprocess. It builds the app in
// process (the database as `serve` configures it: DATABASE_URL, or the data
// dir's embedded cluster, adopting one a running server started) with no HTTP
// listener, and every tool call is a request to the in-process /graphql with
// SCIDEX_TOKEN as its bearer token: the same auth, limits and journal as
// over HTTP. Logs go to stderr; stdout carries only the protocol.
func mcpCmd(ctx context.Context, args []string) error {
	f := newFlags("mcp")
	c := addCommon(f)
	publicKeys := f.str("jwt-public-keys", "SCIDEX_JWT_PUBLIC_KEYS", "", "comma-separated PEM files of RS256/EdDSA public keys")
	jwksURL := f.str("jwks-url", "SCIDEX_JWKS_URL", "", "JWKS URL for RS256/EdDSA keys")
	mf := addMCPFlags(f)
	tf := addToolFlags(f, 0)
	if err := f.Parse(args); err != nil {
		return err
	}
	token := os.Getenv("SCIDEX_TOKEN")
	if token == "" {
		return &configError{problems: []string{"SCIDEX_TOKEN is required: the token the agent acts with (mint one with `scidex token`)"}}
	}
	toolOpts, err := tf.dispatchOpts()
	if err != nil {
		return err
	}
	log, err := c.logger()
	if err != nil {
		return err
	}
	verifier, err := newVerifier(c, *publicKeys, *jwksURL)
	if err != nil {
		return err
	}
	// Refuse a token that does not verify now, rather than serve a session
	// whose every call would fail; one that expires later fails its calls then.
	p, err := verifier.Verify(ctx, token)
	if err != nil {
		return fmt.Errorf("SCIDEX_TOKEN: %s", auth.Reason(err))
	}
	db, err := openDatabase(ctx, *c.dataDir, log, true)
	if err != nil {
		return err
	}
	defer db.close()
	a, err := app.New(app.Config{
		Pool: db.pool, Logger: log, Tools: toolOpts, Runtimes: tf.runtimes(log, *c.dataDir, nil), Queue: tf.queueOpts(),
		OnStart: []func(context.Context, *app.App) error{app.InstallSkills},
		Server:  server.Opts{Verifier: verifier, MCP: mf.options()},
	})
	if err != nil {
		return err
	}
	if err := a.Start(ctx); err != nil {
		return err
	}
	log.Info("mcp: serving on stdio", "actor", p.ID, "writer", p.Has(auth.PermContributor))
	runErr := a.Handler.MCP().RunStdio(ctx, mcp.Caller{Authorization: "Bearer " + token, Writer: p.Has(auth.PermContributor)})
	if ctx.Err() != nil {
		runErr = nil // interrupted, not failed
	}
	if err := a.Stop(); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}
