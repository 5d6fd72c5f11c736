package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ServedBy is the response header the load balancer adds: the name of the
// backend that answered (for a websocket, the one it is tunnelled to).
const ServedBy = "X-Served-By"

// HAProxy is a running haproxy balancing HTTP and websockets round-robin over
// replicas.
type HAProxy struct {
	// URL is the front end, http://127.0.0.1:<port>.
	URL  string
	proc *Daemon
}

// Backend is one replica behind the load balancer.
type Backend struct {
	Name string // what ServedBy says
	Addr string // host:port
}

// StartHAProxy runs haproxy on a free loopback port in front of backends,
// which need not be up yet: a health check of /readyz every 100 ms takes a
// replica in and out of rotation, and a request whose connection to a
// replica fails is sent to another (retries with redispatch), so a replica
// killed between two requests costs its clients nothing. A request already
// sent to a replica that dies is not retried: the client sees the error
// (502) and decides, as with any load balancer. Websockets are tunnelled for
// up to ten minutes of silence.
func StartHAProxy(t testing.TB, backends ...Backend) *HAProxy {
	t.Helper()
	bin := NeedBinary(t, "haproxy")
	port := FreePort(t)
	var servers []string
	for _, b := range backends {
		servers = append(servers, fmt.Sprintf("  server %s %s check inter 100ms fall 1 rise 1", b.Name, b.Addr))
	}
	cfg := strings.Join(append([]string{
		"global",
		"  maxconn 1024",
		"",
		"defaults",
		"  mode http",
		"  timeout connect 2s",
		"  timeout client 60s",
		"  timeout server 60s",
		"  timeout tunnel 10m",
		"  retries 3",
		"  option redispatch 1",
		"",
		"frontend api",
		"  bind 127.0.0.1:" + strconv.Itoa(port),
		"  default_backend replicas",
		"",
		"backend replicas",
		"  balance roundrobin",
		"  option httpchk GET /readyz",
		"  http-check expect status 200",
		"  http-response set-header " + ServedBy + " %s",
	}, servers...), "\n") + "\n"
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	writeOwned(t, path, cfg, nil)
	if out, err := exec.Command(bin, "-c", "-q", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("haproxy refuses its configuration: %v\n%s\n%s", err, out, cfg)
	}
	d := StartDaemon(t, "haproxy", exec.Command(bin, "-db", "-f", path))
	h := &HAProxy{URL: "http://127.0.0.1:" + strconv.Itoa(port), proc: d}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pollUntil(ctx, func() error {
		if err := d.Exited(); err != nil {
			return err
		}
		resp, err := http.Get(h.URL + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil // any answer, 503 included: the front end listens
	}); err != nil {
		t.Fatalf("haproxy did not come up: %v\n%s", err, d.Log())
	}
	return h
}

// Log returns what haproxy logged so far.
func (h *HAProxy) Log() string { return h.proc.Log() }

// WaitServing waits until every named backend has answered through the load
// balancer (health checks have taken it into rotation).
func (h *HAProxy) WaitServing(t testing.TB, within time.Duration, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	seen := map[string]bool{}
	err := pollUntil(ctx, func() error {
		resp, err := http.Get(h.URL + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		seen[resp.Header.Get(ServedBy)] = true
		for _, n := range names {
			if !seen[n] {
				return fmt.Errorf("%s has not answered yet (seen %v)", n, seen)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("haproxy: %v\n%s", err, h.Log())
	}
}
