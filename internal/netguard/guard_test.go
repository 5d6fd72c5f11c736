package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/netguard"
)

// The guard's own verdicts: a table over the deny list, and public
// addresses let through (judged only, never dialled).
func TestVerdicts(t *testing.T) {
	g, err := netguard.New(netguard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"127.0.0.1", "127.255.0.1", "::1", "::ffff:127.0.0.1", "10.0.0.1", "172.16.0.1", "172.31.0.1",
		"192.168.0.1", "169.254.169.254", "fe80::1", "100.64.0.1", "100.127.255.255", "fc00::1", "fd12::1", "0.0.0.0", "::",
		"224.0.0.1", "ff02::1", "64:ff9b::a00:1", "192.0.2.1", "198.18.0.1", "240.0.0.1", "255.255.255.255"} {
		if g.SafeAddr(netip.MustParseAddr(a)) == nil {
			t.Errorf("the guard lets %s through", a)
		}
	}
	for _, a := range []string{"8.8.8.8", "93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700::1111"} {
		if err := g.SafeAddr(netip.MustParseAddr(a)); err != nil {
			t.Errorf("the guard refuses the public address %s: %v", a, err)
		}
	}
}

// rebinder answers a name with a public address the first time and a
// loopback one after: what a DNS rebinding attacker's server does.
type rebinder struct{ calls int }

func (r *rebinder) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.calls++
	if r.calls == 1 {
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// A loopback listener is refused by literal, by localhost and by a name
// that rebinds to it, with a message naming the kind and the allow-list
// entry that would allow it and no connection reaching the listener; the
// exact allow-listed host:port connects.
func TestDialRefusesAndAllows(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan struct{}, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	res := &rebinder{calls: 1} // past its first, public answer
	g, err := netguard.New(netguard.Options{Who: "the test", Resolver: res,
		AfterControl: func(network, address string) error {
			t.Errorf("the guard let %s %s through to connect", network, address)
			return errors.New("test: not to be connected to")
		}})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]string{
		"127.0.0.1":      "127.0.0.1 is a loopback address; the test does not connect to it unless the operator allow-lists 127.0.0.1:" + port,
		"localhost":      "the host localhost resolves to a loopback address",
		"rebind.example": "the host rebind.example resolves to a loopback address",
	} {
		_, err := g.DialContext(context.Background(), "tcp", net.JoinHostPort(host, port))
		var de *netguard.DialError
		if !errors.As(err, &de) || !de.Refused || !strings.Contains(de.Msg, want) {
			t.Errorf("dial %s: %v, want a refusal saying %q", host, err, want)
		}
	}
	select {
	case <-accepted:
		t.Fatal("a refused dial reached the listener")
	default:
	}

	allowed, err := netguard.New(netguard.Options{Allow: []string{"127.0.0.1:" + port}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := allowed.DialContext(context.Background(), "tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("the allow-listed 127.0.0.1:%s: %v", port, err)
	}
	c.Close()
	<-accepted
	if _, err := allowed.DialContext(context.Background(), "tcp", "localhost:"+port); err == nil {
		t.Error("allowing 127.0.0.1:" + port + " allowed localhost:" + port)
	}
}

func TestAllowValidated(t *testing.T) {
	for _, a := range []string{"127.0.0.1", "b:0", "a:http", "*.example:80", "[fe80::1%eth0]:80", ":80"} {
		_, err := netguard.New(netguard.Options{Allow: []string{"ok:1", a}})
		if err == nil || !strings.Contains(err.Error(), "Allow[1]") {
			t.Errorf("Allow entry %q: %v, want an error naming Allow[1]", a, err)
		}
	}
}
