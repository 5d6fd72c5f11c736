package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/e2e"
)

// graphqlWSDir is the Node project with the conformance script, relative to
// this package.
const graphqlWSDir = "../../e2e/graphql-ws"

// graphqlWSChecks are the checks e2e/graphql-ws/conformance.mjs must report as
// passed, by the start of their names: a check dropped from the script fails
// this test as surely as a check that fails.
var graphqlWSChecks = []string{
	"next: a subscription receives the events of writes made over HTTP",
	"complete from the client ends the subscription",
	"complete from the server ends the client's iterator",
	"error: a bad query (an unknown field) reaches the sink as error",
	"error: a bad query (a syntax error) reaches the sink as error",
	"error: a bad filter reaches the sink",
	`auth: the token may be given as {"token": "<jwt>"}`,
	"4403: a bad token is refused",
	"4403: no token is refused",
	"4401: the connection closes when its token expires",
	"subprotocol: the server speaks graphql-transport-ws",
	"4400: a malformed message (not JSON)",
	"4400: a malformed message (no type)",
	"4400: a malformed message (an unknown type)",
	"4400: a malformed message (a type only the server sends)",
	"4400: a malformed message (a subscribe without a query)",
	"4408: no connection_init within the init timeout",
	"4409: a subscribe reusing an active id",
	"4429: a second connection_init",
	"4401: a subscribe before connection_ack",
}

// The graphql-transport-ws protocol against the real binary, driven by the
// protocol's reference client (the npm graphql-ws package) and, for the close
// codes that client never provokes, by a raw websocket: events of HTTP writes
// arrive as next, complete works both ways, errors reach the sink, and every
// close code the protocol defines (4400, 4401, 4403, 4408, 4409, 4429) is
// sent where it should be. See e2e/graphql-ws/conformance.mjs.
func TestGraphQLWSConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary and node")
	}
	node, npm := findNode(t)
	dir, err := filepath.Abs(graphqlWSDir)
	if err != nil {
		t.Fatal(err)
	}
	npmCI(t, npm, dir)

	dataDir := e2e.DataDir(t)
	p := e2e.Start(t, e2e.Opts{DataDir: dataDir})
	tok := e2e.Token(t, dataDir, "ada", "contributor")
	// Minted last: the script connects with it at once, and the server must
	// close that connection with 4401 when it expires a few seconds later.
	short := tokenWithTTL(t, dataDir, "ada", 6*time.Second)

	runNodeChecks(t, node, dir, "conformance.mjs", []string{"SCIDEX_URL=" + p.URL, "SCIDEX_TOKEN=" + tok, "SCIDEX_SHORT_TOKEN=" + short}, p.Log, graphqlWSChecks)
}

// runNodeChecks runs a Node script of the e2e folder dir against the server
// (env added to this process's environment), fails the test if it fails
// (with the server's log), and requires each of checks to start a line of
// its output after "ok   ": the script's report of a check that passed.
func runNodeChecks(t *testing.T, node, dir, script string, env []string, serverLog func() string, checks []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("node %s (%s):\n%s", script, time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("%s: %v\nserver log:\n%s", script, err, serverLog())
	}
	var passed []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, ok := strings.CutPrefix(line, "ok   "); ok {
			passed = append(passed, name)
		}
	}
	for _, want := range checks {
		found := false
		for _, name := range passed {
			found = found || strings.HasPrefix(name, want)
		}
		if !found {
			t.Errorf("no passed check %q in the output", want)
		}
	}
}

// findNode returns node and npm. Without them, or with a node older than
// graphql-ws 6 supports, the test is skipped, unless SCIDEX_REQUIRE_NODE=1 or
// SCIDEX_REQUIRE_BROWSER=1 (scripts/test, CI), where that is a failure.
func findNode(t *testing.T) (node, npm string) {
	t.Helper()
	node, errNode := exec.LookPath("node")
	npm, errNPM := exec.LookPath("npm")
	msg := ""
	if errNode != nil || errNPM != nil {
		msg = "no node and npm: install them (apt-get install -y nodejs npm)"
	} else if v, err := exec.Command(node, "--version").Output(); err != nil {
		msg = fmt.Sprintf("node --version: %v", err)
	} else if major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(strings.TrimSpace(string(v)), "v"), ".", 2)[0]); major < 20 {
		msg = fmt.Sprintf("node %s is too old: graphql-ws 6 needs node 20 or later", strings.TrimSpace(string(v)))
	}
	if msg == "" {
		return node, npm
	}
	for _, env := range []string{"SCIDEX_REQUIRE_NODE", "SCIDEX_REQUIRE_BROWSER"} {
		if os.Getenv(env) == "1" {
			t.Fatalf("%s (%s=1)", msg, env)
		}
	}
	t.Skip(msg)
	return "", ""
}

// npmCI installs the project's locked dependencies with `npm ci`, unless
// node_modules already holds exactly what package.json and package-lock.json
// say (a stamp written after the last successful install). A lock file keeps
// two test runs from installing into the same directory at once.
func npmCI(t *testing.T, npm, dir string) {
	t.Helper()
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "scidex-graphql-ws-npm.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck

	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	want := hex.EncodeToString(h.Sum(nil))
	stamp := filepath.Join(dir, "node_modules", ".scidex-npm-ci")
	if got, err := os.ReadFile(stamp); err == nil && strings.TrimSpace(string(got)) == want {
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
	t.Logf("npm ci took %s", time.Since(start).Round(time.Millisecond))
	if err := os.WriteFile(stamp, []byte(want+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tokenWithTTL runs `scidex token` for a token that expires after ttl.
func tokenWithTTL(t *testing.T, dataDir, sub string, ttl time.Duration) string {
	t.Helper()
	out, err := e2e.Command(t, "token", "--data-dir", dataDir, "--sub", sub, "--permissions", "contributor", "--ttl", ttl.String()).Output()
	if err != nil {
		t.Fatalf("scidex token --ttl %s: %v", ttl, err)
	}
	return strings.TrimSpace(string(out))
}
