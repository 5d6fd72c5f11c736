package httppost

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/scidex/substrate/internal/netguard"
	"github.com/scidex/substrate/internal/secrets"
	"github.com/scidex/substrate/runtimes"
)

// Name is the runtime's name in a tool's `runtime`.
const Name = "http_post"

// Defaults of the Options left zero.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultHeaderTimeout  = 30 * time.Second
	DefaultTimeout        = 60 * time.Second
)

// Options configure the runtime. The zero value is a working runtime that
// refuses every special-purpose address and knows no secret.
type Options struct {
	// Secrets resolves runtime_config.secret_ref. Nil is an empty store: a
	// tool naming a secret is refused.
	Secrets *secrets.Store
	// Allow lists the "host:port" pairs a tool's URL may name although the
	// address they resolve to is one the outbound guard refuses (a tool
	// server on this machine or the operator's network). A pair is matched
	// against the URL's host and port as written (the port defaulting to 80
	// for http and 443 for https; the host compared without case and without
	// a trailing dot; IPv6 literals in brackets): "127.0.0.1:8765" allows
	// http://127.0.0.1:8765/... and nothing else, not localhost:8765, not
	// 127.0.0.1:8766. An allowed pair is trusted whatever it resolves to.
	Allow []string
	// MaxResponseBytes caps a response body; more is CodeOutputTooLarge.
	// Zero is runtimes.MaxOutputBytes.
	MaxResponseBytes int64
	// ConnectTimeout bounds resolving the host, connecting and the TLS
	// handshake (DefaultConnectTimeout when zero); past it the tool is
	// CodeUnreachable.
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for the response headers once the
	// request is sent (DefaultHeaderTimeout when zero): a server that
	// accepts and never answers is cut with CodeWallTimeout.
	HeaderTimeout time.Duration
	// Timeout bounds a whole call (DefaultTimeout when zero). A tool's
	// resource_caps wall time and runtime_config.timeout_ms shorten it,
	// never lengthen it.
	Timeout time.Duration
	// RootCAs are the authorities trusted for https tools; nil is the
	// system's pool.
	RootCAs *x509.CertPool
	// Resolver resolves a tool's host name (net.DefaultResolver when nil).
	// Every address it returns goes through the guard before a connection
	// is attempted, so a resolver cannot open a way past it; tests use it to
	// make a name resolve to a private address.
	Resolver Resolver
	// Logger receives one line per call (tool, host, status, bytes, code);
	// never a header, an argument or a secret. Nil discards.
	Logger *slog.Logger
}

// Resolver looks up the addresses of a host; *net.Resolver is one.
type Resolver = netguard.Resolver

// Runtime posts calls to HTTP tools. One Runtime holds one connection pool
// (one http.Transport) for all its tools; it is safe for concurrent use.
type Runtime struct {
	opts  Options
	allow map[string]bool
	guard *guard
	// transport is used directly, not through an http.Client: a client's
	// redirect machinery (following, or parsing Location before it asks
	// CheckRedirect) is not wanted at all. A 3xx comes back as itself and
	// Run refuses it, so a tool cannot send the call, and its secret, on.
	transport *http.Transport
	log       *slog.Logger
}

// New validates opts and returns the runtime. A bad option is an error
// naming it.
func New(opts Options) (*Runtime, error) {
	if opts.MaxResponseBytes < 0 {
		return nil, fmt.Errorf("httppost: Options.MaxResponseBytes is %d; want a positive byte count, or 0 for the default %d", opts.MaxResponseBytes, runtimes.MaxOutputBytes)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"ConnectTimeout", opts.ConnectTimeout}, {"HeaderTimeout", opts.HeaderTimeout}, {"Timeout", opts.Timeout}} {
		if d.v < 0 {
			return nil, fmt.Errorf("httppost: Options.%s is %s; want a positive duration, or 0 for the default", d.name, d.v)
		}
	}
	if opts.MaxResponseBytes == 0 {
		opts.MaxResponseBytes = runtimes.MaxOutputBytes
	}
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.HeaderTimeout == 0 {
		opts.HeaderTimeout = DefaultHeaderTimeout
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	allow := map[string]bool{}
	for i, a := range opts.Allow {
		key, err := parseAllow(a)
		if err != nil {
			return nil, fmt.Errorf("httppost: Options.Allow[%d] %q: %w", i, a, err)
		}
		allow[key] = true
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Runtime{opts: opts, allow: allow, log: logger}
	r.guard = newGuard(guardOptions{allow: allow, resolver: opts.Resolver, connectTimeout: opts.ConnectTimeout})
	r.transport = &http.Transport{
		// Never a proxy from the environment: through a proxy the guard
		// would judge the proxy's address, not the tool's.
		Proxy:                  nil,
		DialContext:            r.guard.dialContext,
		TLSClientConfig:        &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    opts.ConnectTimeout,
		ResponseHeaderTimeout:  opts.HeaderTimeout,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return r, nil
}

var _ runtimes.Runtime = (*Runtime)(nil)

// Name implements runtimes.Runtime.
func (r *Runtime) Name() string { return Name }

// Close drops the pool's idle connections. Calls still running finish.
func (r *Runtime) Close() error {
	r.transport.CloseIdleConnections()
	return nil
}
