package httppost

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scidex/substrate/runtimes"
)

// forbidden is one address the guard must refuse, and the tripwire that
// would see a connection to it (nil for addresses no test may connect to:
// the guard's test hook stops those before connect(2) if the guard fails).
type forbidden struct {
	host string // as a URL writes it
	port string
	tw   *tripwire
}

func forbiddenAddresses(t *testing.T) []forbidden {
	tw4 := newTripwire(t, "tcp4", "127.0.0.1:0")
	tw6 := tryTripwire(t, "tcp6", "[::1]:0")
	fs := []forbidden{
		{"127.0.0.1", tw4.port(), tw4},
		{"[::ffff:127.0.0.1]", tw4.port(), tw4},
		{"[::ffff:7f00:1]", tw4.port(), tw4},
		{"0.0.0.0", tw4.port(), tw4},
		{"10.0.0.1", "80", nil},
		{"10.255.255.254", "8080", nil},
		{"172.16.0.1", "80", nil},
		{"172.31.255.1", "443", nil},
		{"192.168.1.1", "80", nil},
		{"169.254.169.254", "80", nil},
		{"169.254.1.1", "80", nil},
		{"100.64.0.1", "80", nil},
		{"224.0.0.1", "80", nil},
		{"[fd00::1]", "80", nil},
		{"[fe80::1]", "80", nil},
		{"[ff02::1]", "80", nil},
		{"[64:ff9b::7f00:1]", "80", nil},
		{"[::ffff:10.0.0.1]", "80", nil},
		{"[::ffff:169.254.169.254]", "80", nil},
	}
	if tw6 != nil {
		fs = append(fs, forbidden{"[::1]", tw6.port(), tw6}, forbidden{"[::]", tw6.port(), tw6})
	}
	return fs
}

func untouched(t *testing.T, fs []forbidden) {
	t.Helper()
	done := map[*tripwire]bool{}
	for _, f := range fs {
		if f.tw != nil && !done[f.tw] {
			done[f.tw] = true
			f.tw.untouched(t)
		}
	}
}

// R7: a URL naming a loopback, private, link-local, metadata, CGNAT,
// multicast, unique-local, IPv4-mapped or NAT64 address is refused when the
// tool is checked, refused when it is run, and refused by the dialer itself,
// and no connection reaches a listener there.
func TestLiteralAddressesRefused(t *testing.T) {
	fs := forbiddenAddresses(t)
	r := newRuntime(t, Options{})
	for _, f := range fs {
		u := "http://" + f.host + ":" + f.port + "/convert"
		t.Run(f.host, func(t *testing.T) {
			ps := r.Check(toolFor(u, ""))
			if len(ps) != 1 || ps[0].Path != "runtime_config.url" || ps[0].Constraint != "outbound_guard" {
				t.Fatalf("Check(%s) = %+v, want one outbound_guard problem on runtime_config.url", u, ps)
			}
			_, e := run(t, r, toolFor(u, ""), `{}`)
			wantCode(t, e, runtimes.CodeRefused, false)
			if !strings.Contains(e.Message, "allow-lists") {
				t.Errorf("the refusal does not say how to allow it: %s", e.Message)
			}
			// Below Check: the dialer alone refuses the address.
			_, err := r.guard.dialContext(context.Background(), "tcp", net.JoinHostPort(strings.Trim(f.host, "[]"), f.port))
			var de *dialError
			if !errors.As(err, &de) || !de.refused {
				t.Fatalf("dialContext(%s) = %v, want the guard's refusal", f.host, err)
			}
		})
	}
	untouched(t, fs)
}

// R7: a name that resolves to a forbidden address passes Check (names are
// not resolved at registration) and is refused at dial, on the resolved
// address, before connecting: what the guard judges is what connect(2)
// would have been given, so DNS rebinding gains nothing.
func TestNamesResolvingToForbiddenAddressesRefusedAtDial(t *testing.T) {
	fs := forbiddenAddresses(t)
	names := fakeResolver{}
	var tools []string
	for i, f := range fs {
		name := "tool" + string(rune('a'+i)) + ".evil.test"
		names[name] = []netip.Addr{netip.MustParseAddr(strings.Trim(f.host, "[]"))}
		tools = append(tools, "http://"+name+":"+f.port+"/convert")
	}
	names["many.evil.test"] = []netip.Addr{netip.MustParseAddr("10.1.1.1"), netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("169.254.169.254")}
	tools = append(tools, "http://many.evil.test:"+fs[0].port+"/")
	r := newRuntime(t, Options{Resolver: names})
	for _, u := range tools {
		t.Run(u, func(t *testing.T) {
			if ps := r.Check(toolFor(u, "")); len(ps) != 0 {
				t.Fatalf("Check(%s) = %+v, want none (a name is judged at dial)", u, ps)
			}
			_, e := run(t, r, toolFor(u, ""), `{}`)
			wantCode(t, e, runtimes.CodeRefused, false)
			if !strings.Contains(e.Message, "resolves to") {
				t.Errorf("the refusal does not say the name resolves to a forbidden address: %s", e.Message)
			}
			for _, a := range names[strings.Split(strings.TrimPrefix(u, "http://"), ":")[0]] {
				if strings.Contains(e.Message, a.String()) {
					t.Errorf("the refusal names the resolved address %s: %s", a, e.Message)
				}
			}
		})
	}
	untouched(t, fs)
}

// R7: localhost, resolved by the system's resolver, is refused at dial.
func TestLocalhostRefused(t *testing.T) {
	tw := newTripwire(t, "tcp4", "127.0.0.1:0")
	tw6 := tryTripwire(t, "tcp6", "[::1]:"+tw.port())
	r := newRuntime(t, Options{})
	hosts := []string{"localhost", "localhost.", "LocalHost", "api.localhost"}
	// localhost names never reach the resolver; the machine's own name is
	// resolved by the system's (from /etc/hosts, to loopback here).
	if h, err := os.Hostname(); err == nil {
		if as, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip4", h); err == nil && len(as) > 0 && as[0].Unmap() == netip.MustParseAddr("127.0.0.1") {
			hosts = append(hosts, h)
		} else {
			t.Logf("this machine's name %s does not resolve to 127.0.0.1 (%v %v); its case is skipped", h, as, err)
		}
	}
	for _, host := range hosts {
		_, e := run(t, r, toolFor("http://"+host+":"+tw.port()+"/", ""), `{}`)
		wantCode(t, e, runtimes.CodeRefused, false)
	}
	tw.untouched(t)
	if tw6 != nil {
		tw6.untouched(t)
	}
}

// The allow-list is matched against the URL's host:port as written (case
// and a trailing dot aside), and nothing else: allowing 127.0.0.1:P does not
// allow localhost:P or 127.0.0.1:P+1.
func TestAllowList(t *testing.T) {
	var conns atomic.Int32
	_, hp := serverWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"ok": true}`))
	}), func(s *http.Server) {
		s.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}
	})
	_, port, _ := net.SplitHostPort(hp)

	byIP := newRuntime(t, Options{Allow: []string{"127.0.0.1:" + port}})
	if _, e := run(t, byIP, toolFor("http://127.0.0.1:"+port+"/", ""), `{}`); e != nil {
		t.Fatalf("allow-listed 127.0.0.1:%s: %v", port, e)
	}
	before := conns.Load()
	_, e := run(t, byIP, toolFor("http://localhost:"+port+"/", ""), `{}`)
	wantCode(t, e, runtimes.CodeRefused, false)
	if ps := byIP.Check(toolFor("http://127.0.0.1:1/", "")); len(ps) == 0 {
		t.Error("allowing 127.0.0.1:" + port + " allowed 127.0.0.1:1")
	}

	byName := newRuntime(t, Options{Allow: []string{"LOCALHOST.:" + port}})
	if _, e := run(t, byName, toolFor("http://localhost:"+port+"/", ""), `{}`); e != nil {
		t.Fatalf("allow-listed localhost:%s: %v", port, e)
	}
	_, e = run(t, byName, toolFor("http://127.0.0.1:"+port+"/", ""), `{}`)
	wantCode(t, e, runtimes.CodeRefused, false)
	if got := conns.Load(); got != before+1 {
		t.Errorf("the server saw %d new connections, want %d: a refused call connected", got, before+1)
	}
}

func TestOptionsValidated(t *testing.T) {
	for name, o := range map[string]Options{
		"Allow[0]":         {Allow: []string{"127.0.0.1"}},
		"Allow[1]":         {Allow: []string{"a:1", "b:0"}},
		"port":             {Allow: []string{"a:http"}},
		"pattern":          {Allow: []string{"*.example:80"}},
		"zone":             {Allow: []string{"[fe80::1%eth0]:80"}},
		"MaxResponseBytes": {MaxResponseBytes: -1},
		"HeaderTimeout":    {HeaderTimeout: -1},
		"ConnectTimeout":   {ConnectTimeout: -1},
	} {
		_, err := New(o)
		if err == nil {
			t.Errorf("%s: New accepted %+v", name, o)
			continue
		}
		want := name
		if name == "port" || name == "pattern" || name == "zone" {
			want = "Allow[0]"
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: the error does not name the option: %v", name, err)
		}
	}
}
