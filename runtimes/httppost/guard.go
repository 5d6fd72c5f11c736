package httppost

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/scidex/substrate/internal/netguard"
)

// guard is the outbound guard, internal/netguard (the one implementation
// the sandbox's egress proxy uses too), in the words this runtime's Check
// and classify use: every connection the runtime opens is made by
// dialContext, which resolves the host itself and judges every address on
// the socket before connect(2) (see netguard's package doc).
type guard struct {
	g *netguard.Guard
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
	allow := make([]string, 0, len(o.allow))
	for k := range o.allow {
		allow = append(allow, k)
	}
	g := &guard{}
	ng, err := netguard.New(netguard.Options{Allow: allow, Resolver: o.resolver, ConnectTimeout: o.connectTimeout, Who: Name,
		AfterControl: func(network, address string) error {
			if g.afterControl != nil {
				return g.afterControl(network, address)
			}
			return nil
		}})
	if err != nil { // the keys are parseAllow's: canonical already
		panic("httppost: an allow-list key the guard refuses: " + err.Error())
	}
	g.g = ng
	return g
}

// dialError is a failure to connect, as Run reports it: refused by the
// guard, or the tool unreachable. Its message is safe to show the caller.
type dialError struct {
	refused bool
	msg     string
}

func (e *dialError) Error() string { return e.msg }

// dialContext is the Transport's DialContext. addr is the URL's host and
// port, as the Transport writes it: the allow-list is matched against it.
func (g *guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := g.g.DialContext(ctx, network, addr)
	var de *netguard.DialError
	if errors.As(err, &de) {
		return nil, &dialError{refused: de.Refused, msg: de.Msg}
	}
	return conn, err
}

// allowedAddr reports whether the guard lets a literal address through,
// without dialling: Check's early word on a URL that names an IP.
func (g *guard) allowedAddr(a netip.Addr) error { return g.g.SafeAddr(a) }

// describe names the kind of a refused address, for a message.
func describe(a netip.Addr) string { return netguard.Describe(a) }

// canonicalHostPort is the allow-list's key for a host and port.
func canonicalHostPort(host, port string) string { return netguard.CanonicalHostPort(host, port) }

// parseAllow checks one Options.Allow entry and returns its key.
func parseAllow(s string) (string, error) { return netguard.ParseAllow(s) }
