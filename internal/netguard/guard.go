// Package netguard is the outbound guard of every connection the server
// opens on a tool's behalf: http_post's requests and the bwrap sandbox's
// egress proxy use this one implementation, so a sandboxed program reaches
// no more of the network than an http_post tool does.
//
// Every connection is made by Guard.DialContext, which resolves the host
// itself, and every address is judged again by the dialer's Control hook,
// on the socket, after resolution and before connect(2). A name that
// resolves to a loopback address, or resolves to a public one when checked
// and a private one when dialled (DNS rebinding), is refused before a packet
// leaves: the address judged is the address connected to.
//
// The judgement is code.dny.dev/ssrf's Guardian with its default deny
// lists (every IANA special-purpose IPv4 block: this network, private,
// CGNAT, loopback, link-local and so the metadata address, documentation,
// benchmarking, multicast, reserved; and for IPv6 everything outside
// 2000::/3, so loopback, unspecified, link-local, unique local, multicast,
// IPv4-mapped and NAT64 forms, plus the special-purpose blocks inside it)
// and any port: a tool server on 8080 is as legitimate as one on 443. The
// operator's allow-list names exact host:port pairs that are trusted
// whatever they resolve to.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// DefaultConnectTimeout bounds resolving and connecting when
// Options.ConnectTimeout is zero.
const DefaultConnectTimeout = 10 * time.Second

// Resolver looks up the addresses of a host; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Guard.
type Options struct {
	// Allow lists the "host:port" pairs that may be reached although the
	// address they resolve to is one the guard refuses (a tool server on
	// this machine or the operator's network). A pair is matched against the
	// host and port as asked for (the host compared without case and without
	// a trailing dot, IPv6 literals in brackets): "127.0.0.1:8765" allows
	// 127.0.0.1:8765 and nothing else, not localhost:8765, not
	// 127.0.0.1:8766.
	Allow []string
	// Resolver resolves host names (net.DefaultResolver when nil). Every
	// address it returns goes through the guard, so a resolver cannot open a
	// way past it.
	Resolver Resolver
	// ConnectTimeout bounds resolving and connecting (DefaultConnectTimeout
	// when zero).
	ConnectTimeout time.Duration
	// Who names the component in a refusal ("http_post", "the sandbox's
	// egress proxy"): "<who> does not connect to it unless the operator
	// allow-lists host:port".
	Who string
	// AfterControl, when set (by tests only), runs in the Control hook once
	// the guard has let an address through, and may refuse it: a test of an
	// address no test may ever connect to (10.0.0.1) fails there, before
	// connect(2), even if the guard is broken.
	AfterControl func(network, address string) error
}

// Guard dials on a tool's behalf. It is safe for concurrent use.
type Guard struct {
	ssrf           *ssrf.Guardian
	allow          map[string]bool
	resolver       Resolver
	connectTimeout time.Duration
	who            string
	afterControl   func(network, address string) error
}

// New returns the guard for o, or an error naming the Allow entry that is
// not a host:port.
func New(o Options) (*Guard, error) {
	g := &Guard{ssrf: ssrf.New(ssrf.WithAnyPort()), allow: map[string]bool{}, resolver: o.Resolver,
		connectTimeout: o.ConnectTimeout, who: o.Who, afterControl: o.AfterControl}
	for i, a := range o.Allow {
		key, err := ParseAllow(a)
		if err != nil {
			return nil, fmt.Errorf("Allow[%d] %q: %w", i, a, err)
		}
		g.allow[key] = true
	}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.connectTimeout <= 0 {
		g.connectTimeout = DefaultConnectTimeout
	}
	if g.who == "" {
		g.who = "the server"
	}
	return g, nil
}

// Allowed reports whether the operator allow-listed host:port (any form
// CanonicalHostPort accepts).
func (g *Guard) Allowed(host, port string) bool { return g.allow[CanonicalHostPort(host, port)] }

// DialError is a failure to connect: refused by the guard, or the host
// unreachable. Its message is safe to show the caller: it names the host as
// asked for and the kind of a refused address, never what the server's DNS
// answered nor the server's own configuration.
type DialError struct {
	// Refused is set when the guard refused the address (as opposed to the
	// host not resolving or not answering).
	Refused bool
	Msg     string
}

func (e *DialError) Error() string { return e.Msg }

// errGuard marks the Control hook's refusal so that DialContext can tell it
// from a failure to connect.
type errGuard struct {
	addr  netip.Addr
	local bool // a public address, but one of this machine's own
}

func (e *errGuard) Error() string { return "refused by the outbound guard: " + e.kind() }

func (e *errGuard) kind() string {
	if e.local {
		return "an address of this machine"
	}
	return Describe(e.addr)
}

// DialContext connects to addr, a host and port as asked for: the
// allow-list is matched against it, and every address the host resolves to
// is judged before it is connected to. Its errors are *DialError or the
// context's.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &DialError{Msg: fmt.Sprintf("bad address %q: %v", addr, err)}
	}
	allowed := g.Allowed(host, port)
	dctx, cancel := context.WithTimeout(ctx, g.connectTimeout)
	defer cancel()
	addrs, err := g.resolve(dctx, host)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	d := &net.Dialer{}
	if !allowed {
		d.Control = g.control
	}
	var refused, failed error
	for _, a := range addrs {
		conn, err := d.DialContext(dctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ge *errGuard
		switch {
		case errors.As(err, &ge) && refused == nil:
			refused = g.refusal(host, port, ge)
		case failed == nil:
			failed = g.unreachable(dctx, host, port, err)
		}
	}
	if refused != nil {
		return nil, refused
	}
	if failed == nil {
		failed = &DialError{Msg: fmt.Sprintf("%s has no address to connect to", host)}
	}
	return nil, failed
}

// loopbacks are what a localhost name resolves to.
var loopbacks = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}

// resolve returns host's addresses: itself for an IP literal; the loopback
// addresses for localhost and names under .localhost, as RFC 6761 §6.3 has
// them resolve whatever a resolver says (Go's resolves "localhost" from
// /etc/hosts but sends "localhost." to DNS); the resolver's answer for any
// other name.
func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if h := strings.TrimSuffix(strings.ToLower(host), "."); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return loopbacks, nil
	}
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		// The resolver's own message may name the server's DNS servers; the
		// caller is told only what kind of failure it was.
		var de *net.DNSError
		switch {
		case errors.As(err, &de) && de.IsNotFound:
			return nil, &DialError{Msg: fmt.Sprintf("the host %s does not resolve (no such host)", host)}
		case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &de) && de.IsTimeout):
			return nil, &DialError{Msg: fmt.Sprintf("resolving the host %s timed out", host)}
		default:
			return nil, &DialError{Msg: fmt.Sprintf("resolving the host %s failed", host)}
		}
	}
	if len(addrs) == 0 {
		return nil, &DialError{Msg: fmt.Sprintf("the host %s resolves to no address", host)}
	}
	// Go's resolver may give an A record as an IPv4-mapped IPv6 address;
	// the guard judges (and refuses) every mapped form, so a public IPv4
	// address is unmapped to be judged as itself.
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = a.Unmap()
	}
	return out, nil
}

// control is the dialer's Control hook: the last word before connect(2).
func (g *Guard) control(network, address string, c syscall.RawConn) error {
	if err := g.ssrf.Safe(network, address, c); err != nil {
		ap, perr := netip.ParseAddrPort(address)
		if perr != nil {
			return fmt.Errorf("outbound guard: %w", err)
		}
		return &errGuard{addr: ap.Addr()}
	}
	// A public address can still be this machine's own, where the server
	// and its neighbours listen: refused like loopback.
	if ap, err := netip.ParseAddrPort(address); err != nil || isLocal(ap.Addr()) {
		return &errGuard{addr: ap.Addr(), local: true}
	}
	if g.afterControl != nil {
		return g.afterControl(network, address)
	}
	return nil
}

// refusal words the guard's refusal. An address the host resolved to is
// named by its kind only: the caller wrote the name, and what the server's
// DNS says of it is the server's business.
func (g *Guard) refusal(host, port string, ge *errGuard) *DialError {
	a, what := ge.addr, ge.kind()
	hp := net.JoinHostPort(host, port)
	if lit, err := netip.ParseAddr(host); err == nil && lit == a {
		return &DialError{Refused: true, Msg: fmt.Sprintf("%s is %s; %s does not connect to it unless the operator allow-lists %s", a, what, g.who, hp)}
	}
	return &DialError{Refused: true, Msg: fmt.Sprintf("the host %s resolves to %s; %s does not connect to it unless the operator allow-lists %s", host, what, g.who, hp)}
}

// unreachable words a failed connect: the errno's text (connection
// refused, no route to host) or a timeout.
func (g *Guard) unreachable(ctx context.Context, host, port string, err error) *DialError {
	hp := net.JoinHostPort(host, port)
	var errno syscall.Errno
	switch {
	case ctx.Err() != nil:
		return &DialError{Msg: fmt.Sprintf("no connection to %s within %s", hp, g.connectTimeout)}
	case errors.As(err, &errno):
		return &DialError{Msg: fmt.Sprintf("could not connect to %s: %s", hp, errno.Error())}
	default:
		return &DialError{Msg: fmt.Sprintf("could not connect to %s", hp)}
	}
}

// SafeAddr reports, without dialling, whether the guard lets a literal
// address through (the allow-list aside): a check's early word on a URL
// that names an IP. Its error names the address's kind.
func (g *Guard) SafeAddr(a netip.Addr) error {
	if err := g.ssrf.SafeAddr(a); err != nil {
		return &errGuard{addr: a}
	}
	return nil
}

// isLocal reports whether a is an address of one of this machine's
// interfaces; when they cannot be listed, every address counts as local
// (refused) rather than none.
func isLocal(a netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true
	}
	a = a.Unmap()
	for _, ia := range addrs {
		if n, ok := ia.(*net.IPNet); ok {
			if x, ok := netip.AddrFromSlice(n.IP); ok && x.Unmap() == a {
				return true
			}
		}
	}
	return false
}

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	cgnat  = netip.MustParsePrefix("100.64.0.0/10")
	thisV4 = netip.MustParsePrefix("0.0.0.0/8")
	meta   = netip.MustParseAddr("169.254.169.254")
)

// Describe names the kind of a refused address, for a message.
func Describe(a netip.Addr) string {
	switch {
	case a.Is4In6():
		return "an IPv4-mapped IPv6 address (of " + Describe(a.Unmap()) + ")"
	case nat64.Contains(a):
		return "a NAT64 address"
	case a == meta:
		return "the link-local cloud metadata address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified() || thisV4.Contains(a):
		return "an unspecified address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	case cgnat.Contains(a):
		return "a carrier-grade NAT (shared) address"
	case a.IsPrivate() && a.Is6():
		return "a unique local address"
	case a.IsPrivate():
		return "a private address"
	default:
		return "a special-purpose address"
	}
}

// CanonicalHostPort is the allow-list's key for a host and port: the host
// without case or trailing dot, an IP literal in its canonical form.
func CanonicalHostPort(host, port string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.String()
	}
	if n, err := strconv.Atoi(port); err == nil {
		port = strconv.Itoa(n)
	}
	return net.JoinHostPort(host, port)
}

// ParseAllow checks one allow-list entry, a host:port, and returns its key.
func ParseAllow(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("want host:port (an IPv6 address in brackets): %w", err)
	}
	if host == "" {
		return "", errors.New("the host is empty")
	}
	if strings.Contains(host, "%") {
		return "", errors.New("an IPv6 zone is not allowed")
	}
	if strings.ContainsAny(host, "*/ ") {
		return "", errors.New("an entry is one host, not a pattern or a network")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return CanonicalHostPort(host, strconv.Itoa(n)), nil
}
