package benchkit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/pgembed"
)

// Secret is the JWT secret every benchmark server is started with, and Token
// signs with.
const Secret = "bench-secret-0123456789abcdef-0123456789abcdef"

// Token mints a token for subject sub with permission p, valid for two hours
// (longer than any benchmark runs), as an AI agent on the local machine.
func Token(sub string, p auth.Permission) string {
	tok, err := auth.Mint(auth.MintOpts{Secret: []byte(Secret), Issuer: "scidex", Audience: "scidex", Subject: sub,
		Kind: auth.KindAILocal, Permissions: []auth.Permission{p}, TTL: 2 * time.Hour, Now: time.Now()})
	Check(err)
	return tok
}

// TempDir makes a scratch directory named from prefix, open to all (the
// embedded cluster runs as the postgres user), and registers its removal with
// AtExit.
func TempDir(prefix string) string {
	dir, err := os.MkdirTemp("", prefix)
	Check(err)
	AtExit(func() { _ = os.RemoveAll(dir) })
	Check(os.Chmod(dir, 0o755))
	return dir
}

// StackOpts says how to bring up a Stack.
type StackOpts struct {
	// Prefix names the scratch directory (scidex-bench-mcp-).
	Prefix string
	// Settings are the cluster's postgresql.conf settings.
	Settings map[string]string
	// Bin is an already built scidex binary; empty builds ./cmd/scidex.
	Bin string
	// Pool is the server's pool_max_conns.
	Pool int
	// Flags are `scidex serve` flags besides --addr, --data-dir and
	// --log-level (which is info, for the address the server logs).
	Flags []string
	// Group starts the server in its own process group (ServerOpts.Group).
	Group bool
}

// Stack is what most benchmarks measure: the scidex server on an embedded
// PostgreSQL cluster of its own, in a scratch directory.
type Stack struct {
	// Dir is the scratch directory: the cluster in pg/, the server's data
	// directory in data/, the binary when it was built.
	Dir string
	// Cluster is the database the server uses, for the floors run on it.
	Cluster *pgembed.Cluster
	// Server is the running server.
	Server *Server
	// Bin is the scidex binary the server runs (o.Bin, or the one built),
	// to start another server beside it.
	Bin string
}

// Start makes the scratch directory, starts the cluster in it, builds the
// binary unless o.Bin names one, and starts the server on the cluster with
// Secret. All of it is undone by Cleanup.
func Start(o StackOpts) *Stack {
	st := &Stack{Dir: TempDir(o.Prefix)}
	var err error
	st.Cluster, err = pgembed.Start(context.Background(), pgembed.Options{Dir: filepath.Join(st.Dir, "pg"), Settings: o.Settings})
	Check(err)
	AtExit(func() { _ = st.Cluster.Stop(context.Background()) })
	bin := o.Bin
	if bin == "" {
		bin = Build(st.Dir)
	}
	st.Bin = bin
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(st.Dir, "data")}, o.Flags...)
	st.Server = StartServer(ServerOpts{Bin: bin, Args: append(args, "--log-level", "info"), Group: o.Group, Env: []string{
		fmt.Sprintf("DATABASE_URL=%s pool_max_conns=%d", st.Cluster.ConnString(), o.Pool), "SCIDEX_JWT_SECRET=" + Secret}})
	return st
}

// PGData is the cluster's data directory (for TakeCPU).
func (st *Stack) PGData() string { return filepath.Join(st.Dir, "pg", "data") }

// GraphQL is the server's GraphQL endpoint.
func (st *Stack) GraphQL() string { return st.Server.URL() + "/graphql" }
