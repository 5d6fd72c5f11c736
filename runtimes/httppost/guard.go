package httppost

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

// guard is the outbound guard: every connection the runtime opens is made
// by dialContext, which resolves the host itself, and every address is
// judged again by the dialer's Control hook, on the socket, after
// resolution and before connect(2). A name that resolves to a loopback
// address, or resolves to a public one when checked and a private one when
// dialled (DNS rebinding), is refused before a packet leaves: the address
// judged is the address connected to.
//
// The judgement is code.dny.dev/ssrf's Guardian with its default deny
// lists (every IANA special-purpose IPv4 block: this network, private,
// CGNAT, loopback, link-local and so the metadata address, documentation,
// benchmarking, multicast, reserved; and for IPv6 everything outside
// 2000::/3, so loopback, unspecified, link-local, unique local, multicast,
// IPv4-mapped and NAT64 forms, plus the special-purpose blocks inside it)
// and any port: a tool server on 8080 is as legitimate as one on 443.
type guard struct {
	ssrf           *ssrf.Guardian
	allow          map[string]bool
	resolver       Resolver
	connectTimeout time.Duration
	// afterControl, when set (by tests only), runs in the Control hook once
	// the guard has let an address through, and may refuse it: a test of
	// an address no test may ever connect to (10.0.0.1) fails there, before
	// connect(2), even if the guard is broken.
	afterControl func(network, address string) error
}

type guardOptions struct {
	allow          map[string]bool
	resolver       Resolver
	connectTimeout time.Duration
}

func newGuard(o guardOptions) *guard {
	g := &guard{ssrf: ssrf.New(ssrf.WithAnyPort()), allow: o.allow, resolver: o.resolver, connectTimeout: o.connectTimeout}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	return g
}

// dialError is a failure to connect, as Run reports it: refused by the
// guard, or the tool unreachable. Its message is safe to show the caller.
type dialError struct {
	refused bool
	msg     string
}

func (e *dialError) Error() string { return e.msg }

// errGuard marks the Control hook's refusal so that dialContext can tell it
// from a failure to connect.
type errGuard struct{ addr netip.Addr }

func (e *errGuard) Error() string { return "refused by the outbound guard: " + describe(e.addr) }

// dialContext is the Transport's DialContext. addr is the URL's host and
// port, as the Transport writes it: the allow-list is matched against it.
func (g *guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &dialError{msg: fmt.Sprintf("bad address %q: %v", addr, err)}
	}
	allowed := g.allow[canonicalHostPort(host, port)]
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
			refused = g.refusal(host, port, ge.addr)
		case failed == nil:
			failed = g.unreachable(dctx, host, port, err)
		}
	}
	if refused != nil {
		return nil, refused
	}
	if failed == nil {
		failed = &dialError{msg: fmt.Sprintf("%s has no address to connect to", host)}
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
func (g *guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
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
			return nil, &dialError{msg: fmt.Sprintf("the tool's host %s does not resolve (no such host)", host)}
		case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &de) && de.IsTimeout):
			return nil, &dialError{msg: fmt.Sprintf("resolving the tool's host %s timed out", host)}
		default:
			return nil, &dialError{msg: fmt.Sprintf("resolving the tool's host %s failed", host)}
		}
	}
	if len(addrs) == 0 {
		return nil, &dialError{msg: fmt.Sprintf("the tool's host %s resolves to no address", host)}
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
func (g *guard) control(network, address string, c syscall.RawConn) error {
	if err := g.ssrf.Safe(network, address, c); err != nil {
		ap, perr := netip.ParseAddrPort(address)
		if perr != nil {
			return fmt.Errorf("outbound guard: %w", err)
		}
		return &errGuard{addr: ap.Addr()}
	}
	if g.afterControl != nil {
		return g.afterControl(network, address)
	}
	return nil
}

// refusal words the guard's refusal. An address the host resolved to is
// named by its kind only: the caller wrote the name, and what the server's
// DNS says of it is the server's business.
func (g *guard) refusal(host, port string, a netip.Addr) *dialError {
	what := describe(a)
	if lit, err := netip.ParseAddr(host); err == nil && lit == a {
		return &dialError{refused: true, msg: fmt.Sprintf("%s is %s; http_post does not connect to it unless the operator allow-lists %s", a, what, net.JoinHostPort(host, port))}
	}
	return &dialError{refused: true, msg: fmt.Sprintf("the tool's host %s resolves to %s; http_post does not connect to it unless the operator allow-lists %s", host, what, net.JoinHostPort(host, port))}
}

// unreachable words a failed connect: the errno's text (connection
// refused, no route to host) or a timeout.
func (g *guard) unreachable(ctx context.Context, host, port string, err error) *dialError {
	hp := net.JoinHostPort(host, port)
	var errno syscall.Errno
	switch {
	case ctx.Err() != nil:
		return &dialError{msg: fmt.Sprintf("no connection to %s within %s", hp, g.connectTimeout)}
	case errors.As(err, &errno):
		return &dialError{msg: fmt.Sprintf("could not connect to %s: %s", hp, errno.Error())}
	default:
		return &dialError{msg: fmt.Sprintf("could not connect to %s", hp)}
	}
}

// allowedAddr reports whether the guard lets a literal address through,
// without dialling: Check's early word on a URL that names an IP.
func (g *guard) allowedAddr(a netip.Addr) error {
	if err := g.ssrf.SafeAddr(a); err != nil {
		return &errGuard{addr: a}
	}
	return nil
}

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	cgnat  = netip.MustParsePrefix("100.64.0.0/10")
	thisV4 = netip.MustParsePrefix("0.0.0.0/8")
	meta   = netip.MustParseAddr("169.254.169.254")
)

// describe names the kind of a refused address, for a message.
func describe(a netip.Addr) string {
	switch {
	case a.Is4In6():
		return "an IPv4-mapped IPv6 address (of " + describe(a.Unmap()) + ")"
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

// canonicalHostPort is the allow-list's key for a host and port: the host
// without case or trailing dot, an IP literal in its canonical form.
func canonicalHostPort(host, port string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.String()
	}
	if n, err := strconv.Atoi(port); err == nil {
		port = strconv.Itoa(n)
	}
	return net.JoinHostPort(host, port)
}

// parseAllow checks one Options.Allow entry and returns its key.
func parseAllow(s string) (string, error) {
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
	return canonicalHostPort(host, strconv.Itoa(n)), nil
}
