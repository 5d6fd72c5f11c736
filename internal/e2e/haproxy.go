package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
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
	if len(backends) != 2 || backends[0].Name != "a" || backends[1].Name != "b" {
		t.Fatalf("StartHAProxy runs deploy/haproxy.cfg, which has two replicas, a and b; got %v", backends)
	}
	port := FreePort(t)
	path := RepoFile(t, "deploy", "haproxy.cfg")
	env := append(os.Environ(), "SCIDEX_LB_BIND=127.0.0.1:"+strconv.Itoa(port),
		"SCIDEX_REPLICA_A="+backends[0].Addr, "SCIDEX_REPLICA_B="+backends[1].Addr,
		// Quick checks: a replica leaves and rejoins the rotation within 100 ms.
		"SCIDEX_LB_CHECK_INTER=100ms", "SCIDEX_LB_FALL=1", "SCIDEX_LB_RISE=1")
	check := exec.Command(bin, "-c", "-q", "-f", path)
	check.Env = env
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("haproxy refuses deploy/haproxy.cfg: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-db", "-f", path)
	cmd.Env = env
	d := StartDaemon(t, "haproxy", cmd)
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

// RepoFile is the path of a file of this repository (deploy/haproxy.cfg…),
// found from this source file's place in it.
func RepoFile(t testing.TB, elem ...string) string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("e2e: cannot tell where the repository is")
	}
	path := filepath.Join(append([]string{filepath.Dir(self), "..", ".."}, elem...)...)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("e2e: %v", err)
	}
	return path
}
