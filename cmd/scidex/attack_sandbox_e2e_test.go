package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/e2e"
)

// reachScript tries every way a sandboxed tool with network: allow might
// reach the host's loopback: connecting itself to the server's own port and
// to another host service, and asking its proxy (HTTPS_PROXY) for a tunnel
// to each. It reports each outcome on stderr and fails.
const reachScript = `#!/usr/bin/bash
for target in "$@"; do
  if (exec 7<>/dev/tcp/${target%:*}/${target##*:}) 2>/dev/null; then
    echo "direct $target: CONNECTED" >&2
  else
    echo "direct $target: refused" >&2
  fi
  p=${HTTPS_PROXY#http://}
  if exec 7<>/dev/tcp/${p%:*}/${p##*:}; then
    printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$target" "$target" >&7
    IFS= read -r status <&7
    echo "proxy $target: $status" >&2
    exec 7<&-
  fi
done
exit 1
`

// TARGETS.md R6 against the real binary (issue 15 §6 and §8): an admin
// registers a bwrap tool with network: allow that tries to reach the
// server's own port and a loopback service the test runs; neither sees a
// connection, and the call's record says the egress proxy refused both and
// why. A tool writing the sandbox's root fails on a read-only file system.
func TestAttackSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	secret := "attack-sandbox-secret-0123456789abcdef-0123"
	env := []string{"DATABASE_URL=" + dbtest.URL(t), "SCIDEX_JWT_SECRET=" + secret}
	srv := e2e.Start(t, e2e.Opts{DataDir: e2e.DataDir(t), Env: env, Args: []string{"--bwrap-egress-shim", egressShimBinary(t)}})
	admin := mint(t, secret, "ada", auth.PermAdmin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	svc, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	reached := make(chan string, 8)
	go func() {
		for {
			c, err := svc.Accept()
			if err != nil {
				return
			}
			reached <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	serverHP, svcHP := u.Host, svc.Addr().String()

	callErr := registerAndCall(ctx, t, srv.URL, admin, "attack.reach", reachScript, "allow", serverHP, svcHP)
	if callErr["code"] != "tool_error" {
		t.Fatalf("the call's error %v, want tool_error", callErr)
	}
	details, _ := callErr["details"].(map[string]any)
	stderr, _ := details["stderr"].(string)
	refused := fmt.Sprint(details["egress_refused"])
	for _, hp := range []string{serverHP, svcHP} {
		if !strings.Contains(stderr, "direct "+hp+": refused") {
			t.Errorf("stderr %q: want the direct connection to %s refused", stderr, hp)
		}
		if !strings.Contains(stderr, "proxy "+hp+": HTTP/1.1 403 Forbidden") {
			t.Errorf("stderr %q: want the proxy to refuse %s with 403", stderr, hp)
		}
		if want := "is a loopback address; the sandbox's egress proxy does not connect to it unless the operator allow-lists " + hp; !strings.Contains(refused, want) {
			t.Errorf("egress_refused %s: want %q", refused, want)
		}
	}
	select {
	case from := <-reached:
		t.Fatalf("the host's loopback service was reached from %s", from)
	default:
	}

	callErr = registerAndCall(ctx, t, srv.URL, admin, "attack.rootfill", "#!/bin/sh\nhead -c 200000000 /dev/zero > /fill\n", "deny")
	details, _ = callErr["details"].(map[string]any)
	if stderr, _ := details["stderr"].(string); callErr["code"] != "tool_error" || !strings.Contains(stderr, "Read-only file system") {
		t.Fatalf("writing /: %v, want a tool_error on a read-only file system", callErr)
	}
}

// registerAndCall registers a one-script bwrap tool as admin, activates it,
// calls it with args as its command's arguments, and returns the call's
// recorded error (the test wants it to fail).
func registerAndCall(ctx context.Context, t *testing.T, url, admin, name, script, network string, args ...string) map[string]any {
	t.Helper()
	registerActive(ctx, t, url, admin, name, script, network, args...)
	var inv struct {
		InvokeTool struct {
			Status string
			Error  map[string]any
		}
	}
	if err := gql(ctx, url, admin, `mutation($n: String!) { invokeTool(input: {name: $n, args: {}}) { ... on ToolCall { status error } } }`,
		map[string]any{"n": name}, &inv); err != nil {
		t.Fatal(err)
	}
	if inv.InvokeTool.Status != "FAILED" {
		t.Fatalf("%s: the call is %q (%v), want FAILED", name, inv.InvokeTool.Status, inv.InvokeTool.Error)
	}
	return inv.InvokeTool.Error
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// egressShimBinary builds cmd/scidex-egress-shim for the server to use.
func egressShimBinary(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "scidex-shim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	bin := filepath.Join(dir, "scidex-egress-shim")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/scidex/substrate/cmd/scidex-egress-shim")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the egress shim: %v\n%s", err, out)
	}
	return bin
}
