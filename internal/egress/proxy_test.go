package egress_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/egress"
	"github.com/scidex/substrate/internal/netguard"
)

// startProxy serves a proxy over allow on a loopback listener (standing in
// for the sandbox's) and returns its address.
func startProxy(t *testing.T, o egress.Options, allow ...string) (*egress.Proxy, string) {
	t.Helper()
	g, err := netguard.New(netguard.Options{Allow: allow, Who: "the sandbox's egress proxy"})
	if err != nil {
		t.Fatal(err)
	}
	o.Guard = g
	p, err := egress.New(o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(l)
	t.Cleanup(p.Close)
	return p, l.Addr().String()
}

// connect sends CONNECT target to the proxy and returns the status line and
// the connection, positioned after the answer's headers.
func connect(t *testing.T, proxy, target string) (string, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxy, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return resp.Status + ": " + string(body), c, br
	}
	return resp.Status, c, br
}

func backend(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s
}

// A tunnel to a loopback service is refused with the guard's reason, and
// the refusal is remembered for the call's record; allow-listed, the same
// service is tunnelled to and fetched through plain HTTP.
func TestProxyGuards(t *testing.T) {
	s := backend(t)
	hp := strings.TrimPrefix(s.URL, "http://")
	p, addr := startProxy(t, egress.Options{})
	status, _, _ := connect(t, addr, hp)
	if !strings.HasPrefix(status, "403") || !strings.Contains(status, "is a loopback address") || !strings.Contains(status, "allow-lists "+hp) {
		t.Fatalf("CONNECT %s: %s, want 403 with the guard's reason", hp, status)
	}
	if r := p.Refusals(); len(r) != 1 || !strings.Contains(r[0], "loopback") {
		t.Fatalf("refusals %v", r)
	}

	_, allowed := startProxy(t, egress.Options{}, hp)
	status, c, br := connect(t, allowed, hp)
	if !strings.HasPrefix(status, "200") {
		t.Fatalf("CONNECT to the allow-listed %s: %s", hp, status)
	}
	fmt.Fprintf(c, "GET /tunnel HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", hp)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "hello from /tunnel" {
		t.Fatalf("through the tunnel: %q", body)
	}

	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(mustURL(t, "http://"+allowed))}, Timeout: 10 * time.Second}
	resp, err = client.Get(s.URL + "/plain")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello from /plain" {
		t.Fatalf("plain HTTP through the proxy: %d %q", resp.StatusCode, body)
	}
}

// Hosts narrows the proxy to a tool's allowed_hosts.
func TestProxyHosts(t *testing.T) {
	s, other := backend(t), backend(t)
	hp, otherHP := strings.TrimPrefix(s.URL, "http://"), strings.TrimPrefix(other.URL, "http://")
	p, addr := startProxy(t, egress.Options{Hosts: []string{hp}}, hp, otherHP)
	if status, _, _ := connect(t, addr, hp); !strings.HasPrefix(status, "200") {
		t.Fatalf("an allowed host: %s", status)
	}
	if status, _, _ := connect(t, addr, otherHP); !strings.HasPrefix(status, "403") || !strings.Contains(status, "allowed_hosts") {
		t.Fatalf("another host: %s", status)
	}
	if len(p.Refusals()) != 1 {
		t.Fatalf("refusals %v", p.Refusals())
	}
	if _, err := egress.New(egress.Options{Guard: &netguard.Guard{}, Hosts: []string{"example.org"}}); err == nil || !strings.Contains(err.Error(), "Hosts[0]") {
		t.Fatalf("a host without a port: %v", err)
	}
}

// Close cuts an open tunnel.
func TestProxyCloseCutsTunnels(t *testing.T) {
	s := backend(t)
	hp := strings.TrimPrefix(s.URL, "http://")
	p, addr := startProxy(t, egress.Options{}, hp)
	status, c, _ := connect(t, addr, hp)
	if !strings.HasPrefix(status, "200") {
		t.Fatal(status)
	}
	p.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Fatalf("read after Close: %v, want the tunnel closed", err)
	}
}

// ReceiveListener takes only a listening TCP socket from the sandbox.
func TestReceiveListener(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	send := func(fd int) error {
		srv, box, err := egress.ControlPair()
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Sendmsg(int(box.Fd()), []byte("L"), syscall.UnixRights(fd), nil, 0); err != nil {
			t.Fatal(err)
		}
		box.Close()
		l, err := egress.ReceiveListener(ctx, srv)
		if err == nil {
			l.Close()
		}
		return err
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f, _ := l.(*net.TCPListener).File()
	defer f.Close()
	if err := send(int(f.Fd())); err != nil {
		t.Fatalf("a listener: %v", err)
	}
	u, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	uf, _ := u.(*net.UDPConn).File()
	defer uf.Close()
	if err := send(int(uf.Fd())); err == nil || !strings.Contains(err.Error(), "want a listening IPv4 stream socket") {
		t.Fatalf("a UDP socket: %v", err)
	}
	srv, box, _ := egress.ControlPair()
	box.Close()
	if _, err := egress.ReceiveListener(ctx, srv); err == nil {
		t.Fatal("a closed control socket gave a listener")
	}
	// Nothing sent, the other end still open: the context ends the wait.
	srv, box, _ = egress.ControlPair()
	defer box.Close()
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if _, err := egress.ReceiveListener(short, srv); err == nil {
		t.Fatal("an abandoned wait gave a listener")
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
