package bwrap_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scidex/substrate/runtimes"
	"github.com/scidex/substrate/runtimes/bwrap"
)

// TARGETS.md R6 (issue 15 §6): a networked sandbox reaches the outside only
// through the server's egress proxy, which applies http_post's outbound
// guard and the operator's allow-list.

// egressScript is a tool that tries one way out: "direct" connects to
// host:port itself; "connect" asks its HTTPS_PROXY for a CONNECT tunnel and
// GETs / through it; "get" asks its HTTP_PROXY for http://host:port/. It
// prints the answer's body, or fails with the proxy's answer on stderr.
//
// It runs no other program (bash builtins only): in rlimit mode RLIMIT_NPROC
// counts every process of the sandbox uid on the machine, and a test of the
// network should not fail for another test's fork bomb.
const egressScript = `#!/usr/bin/bash
mode=$1 target=$2
if [ "$mode" = direct ]; then
  exec 7<>/dev/tcp/${target%:*}/${target##*:} && echo '{"connected": true}'
  exit
fi
p=${HTTP_PROXY#http://}
exec 7<>/dev/tcp/${p%:*}/${p##*:} || exit 3
rest() { while IFS= read -r line || [ -n "$line" ]; do printf '%s\n' "$line"; done <&7; }
answer() {
  IFS= read -r status <&7
  case "$status" in *" 200 "*) ;; *) echo "proxy: $status" >&2; rest >&2; exit 1;; esac
  while IFS= read -r line <&7 && [ "$line" != $'\r' ]; do :; done
}
if [ "$mode" = connect ]; then
  printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$target" "$target" >&7
  answer
  printf 'GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$target" >&7
else
  printf 'GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$target" "$target" >&7
fi
answer
rest
`

func egressTool(network, mode, target string, hosts ...string) *runtimes.Tool {
	tool, _ := bundleTool("egress", map[string]string{"run.sh": egressScript}, fmt.Sprintf(`{"command":["run.sh",%q,%q]}`, mode, target))
	tool.Caps.Network = network
	tool.Caps.AllowedHosts = hosts
	return tool
}

// hostService is an HTTP server on the host's loopback that counts the
// connections it accepts: what a sandbox must not reach unless allowed.
type hostService struct {
	srv   *httptest.Server
	conns chan struct{}
}

func newHostService(t *testing.T) *hostService {
	h := &hostService{conns: make(chan struct{}, 64)}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"reached": "the host's loopback"}`)
	}))
	h.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			h.conns <- struct{}{}
		}
	}
	h.srv.Start()
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hostService) hostPort() string { return strings.TrimPrefix(h.srv.URL, "http://") }

func (h *hostService) untouched(t *testing.T) {
	t.Helper()
	select {
	case <-h.conns:
		t.Fatal("a connection from the sandbox reached the host's loopback service")
	default:
	}
}

var modes = []struct {
	name string
	opts func(*bwrap.Options)
}{
	{"cgroup", func(*bwrap.Options) {}},
	{"rlimit", func(o *bwrap.Options) { o.NoCgroups = true }},
}

// A network=allow tool does not reach a listener on the host's loopback:
// not directly (its loopback is its own), not through its proxy by
// address, by localhost or by plain HTTP (the guard refuses, and the call's
// record says why and how the operator would allow it). A network=deny tool
// has no proxy at all.
func TestEscapeHostLoopback(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			rt := newRuntime(t, mode.opts)
			svc := newHostService(t)
			hp := svc.hostPort()
			_, port, _ := net.SplitHostPort(hp)

			_, err := call(t, rt, egressTool("allow", "direct", hp), `{}`)
			e := wantError(t, err, runtimes.CodeToolError)
			if stderr, _ := e.Details["stderr"].(string); !strings.Contains(stderr, "Connection refused") {
				t.Fatalf("direct: stderr %q, want the connection refused", stderr)
			}

			for _, c := range []struct{ mode, target, reason string }{
				{"connect", hp, "127.0.0.1 is a loopback address; the sandbox's egress proxy does not connect to it unless the operator allow-lists 127.0.0.1:" + port},
				{"get", hp, "is a loopback address"},
				{"connect", "localhost:" + port, "the host localhost resolves to a loopback address"},
				{"connect", "169.254.169.254:80", "the link-local cloud metadata address"},
			} {
				_, err := call(t, rt, egressTool("allow", c.mode, c.target), `{}`)
				e := wantError(t, err, runtimes.CodeToolError)
				stderr, _ := e.Details["stderr"].(string)
				if !strings.Contains(stderr, "403 Forbidden") || !strings.Contains(stderr, c.reason) {
					t.Errorf("%s %s: stderr %q, want the proxy's 403 saying %q", c.mode, c.target, stderr, c.reason)
				}
				refused, _ := e.Details["egress_refused"].([]string)
				if len(refused) != 1 || !strings.Contains(refused[0], c.reason) {
					t.Errorf("%s %s: egress_refused %v, want the refusal recorded", c.mode, c.target, refused)
				}
			}

			_, err = call(t, rt, egressTool("deny", "connect", hp), `{}`)
			wantError(t, err, runtimes.CodeToolError)
			svc.untouched(t)
		})
	}
}

// The exact host:port the operator allow-listed is reached through the
// proxy, by tunnel and by plain HTTP; with network=specific only the
// tool's allowed_hosts are, each still subject to the guard.
func TestEgressAllowListed(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			svc, other := newHostService(t), newHostService(t)
			rt := newRuntime(t, mode.opts, func(o *bwrap.Options) { o.EgressAllow = []string{svc.hostPort(), other.hostPort()} })
			for _, m := range []string{"connect", "get"} {
				res, err := call(t, rt, egressTool("allow", m, svc.hostPort()), `{}`)
				if err != nil {
					t.Fatalf("%s to the allow-listed %s: %v %v", m, svc.hostPort(), err, details(err))
				}
				if !strings.Contains(string(res.Output), `"reached"`) {
					t.Fatalf("%s: output %s", m, res.Output)
				}
			}
			if len(svc.conns) == 0 {
				t.Fatal("the allow-listed service saw no connection")
			}

			res, err := call(t, rt, egressTool("specific", "connect", svc.hostPort(), svc.hostPort()), `{}`)
			if err != nil || !strings.Contains(string(res.Output), `"reached"`) {
				t.Fatalf("specific, its allowed host: %v %v %v", res, err, details(err))
			}
			_, err = call(t, rt, egressTool("specific", "connect", other.hostPort(), svc.hostPort()), `{}`)
			e := wantError(t, err, runtimes.CodeToolError)
			if refused, _ := e.Details["egress_refused"].([]string); len(refused) != 1 || !strings.Contains(refused[0], "not among the tool's resource_caps.allowed_hosts") {
				t.Fatalf("specific, another host: egress_refused %v", e.Details["egress_refused"])
			}
			other.untouched(t)
		})
	}
}

// A server without the egress shim gives no tool the network.
func TestNoEgressShim(t *testing.T) {
	rt := newRuntime(t, func(o *bwrap.Options) { o.EgressShim = "" })
	ps := rt.Check(egressTool("allow", "direct", "example.org:80"))
	if len(ps) != 1 || ps[0].Path != "resource_caps.network" || !strings.Contains(ps[0].Message, "no egress shim") {
		t.Fatalf("Check = %+v, want the network refused for want of the shim", ps)
	}
}

// details are a runtime error's details, for a failure message.
func details(err error) map[string]any {
	var e *runtimes.Error
	if errors.As(err, &e) {
		return e.Details
	}
	return nil
}
