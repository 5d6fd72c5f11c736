// Package egress is the one way out of a networked sandbox: an HTTP proxy
// (CONNECT tunnels and plain absolute-URI requests) that the server runs
// for one call and that dials every connection through internal/netguard,
// the outbound guard http_post uses, with the operator's allow-list. A
// sandbox has a network namespace of its own (its loopback and nothing
// else); the proxy accepts on a listener that lives in that namespace
// (ReceiveListener: handed over by cmd/scidex-egress-shim before the tool
// starts), so the tool reaches 127.0.0.1:<port>, its HTTP_PROXY, and
// through it only what the guard lets through: never the host's loopback,
// the server's own port, private or link-local networks or the cloud
// metadata address, unless the operator allow-listed that exact host:port.
package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/scidex/substrate/internal/netguard"
)

// Options configure one call's proxy.
type Options struct {
	// Guard dials every connection. Required.
	Guard *netguard.Guard
	// Hosts, when not nil, are the only host:port pairs the proxy connects
	// to (a tool's allowed_hosts under network: specific), each still
	// judged by the guard.
	Hosts []string
	// MaxConns caps the tunnels and requests in flight at once (default 32).
	MaxConns int
	// Logger receives one line per refusal. Nil discards.
	Logger *slog.Logger
}

// maxRefusals caps the refusals a proxy remembers for the call's record.
const maxRefusals = 16

// Proxy is one call's egress proxy. It is safe for concurrent use.
type Proxy struct {
	guard     *netguard.Guard
	hosts     map[string]bool
	slots     chan struct{}
	log       *slog.Logger
	srv       *http.Server
	transport *http.Transport

	mu       sync.Mutex
	refused  []string
	tunnels  map[net.Conn]bool
	closed   bool
	draining sync.WaitGroup
}

// New returns the proxy for o, or an error naming the Hosts entry that is
// not a host:port.
func New(o Options) (*Proxy, error) {
	if o.Guard == nil {
		return nil, errors.New("egress: Options.Guard is required")
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 32
	}
	p := &Proxy{guard: o.Guard, slots: make(chan struct{}, o.MaxConns), log: o.Logger, tunnels: map[net.Conn]bool{}}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if o.Hosts != nil {
		p.hosts = map[string]bool{}
		for i, h := range o.Hosts {
			key, err := netguard.ParseAllow(h)
			if err != nil {
				return nil, fmt.Errorf("egress: Hosts[%d] %q: %w", i, h, err)
			}
			p.hosts[key] = true
		}
	}
	p.transport = &http.Transport{
		// Never a proxy from the environment: the guard judges what it dials.
		Proxy:                  nil,
		DialContext:            p.dial,
		MaxIdleConns:           8,
		IdleConnTimeout:        30 * time.Second,
		ResponseHeaderTimeout:  5 * time.Minute,
		MaxResponseHeaderBytes: 64 << 10,
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serveHTTP), ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)}
	return p, nil
}

// Serve accepts the sandbox's connections on l until Close.
func (p *Proxy) Serve(l net.Listener) {
	_ = p.srv.Serve(l)
}

// Close stops the proxy: the listener, every request and every tunnel.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.srv.Close()
	p.transport.CloseIdleConnections()
	p.draining.Wait()
}

// Refusals are the distinct refusals of this call, in order, for its
// record: what the tool asked for and why it was not connected.
func (p *Proxy) Refusals() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.refused...)
}

func (p *Proxy) refuse(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.refused {
		if r == msg {
			return
		}
	}
	if len(p.refused) < maxRefusals {
		p.refused = append(p.refused, msg)
		p.log.Info("egress refused", "reason", msg)
	}
}

// dial connects to a host:port as the tool asked for it, through the
// policy and the guard.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &netguard.DialError{Msg: fmt.Sprintf("bad address %q: want host:port", addr)}
	}
	if p.hosts != nil && !p.hosts[netguard.CanonicalHostPort(host, port)] {
		return nil, &netguard.DialError{Refused: true,
			Msg: fmt.Sprintf("%s is not among the tool's resource_caps.allowed_hosts", net.JoinHostPort(host, port))}
	}
	return p.guard.DialContext(ctx, "tcp", addr)
}

func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	default:
		http.Error(w, fmt.Sprintf("scidex egress: more than %d connections at once", cap(p.slots)), http.StatusServiceUnavailable)
		return
	}
	switch {
	case r.Method == http.MethodConnect:
		p.connect(w, r)
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		p.forward(w, r)
	case r.URL.IsAbs():
		http.Error(w, fmt.Sprintf("scidex egress: a %s URL goes through CONNECT (HTTPS_PROXY)", r.URL.Scheme), http.StatusBadRequest)
	default:
		http.Error(w, "scidex egress: this is the sandbox's HTTP proxy; send it CONNECT host:port or an absolute http:// URL", http.StatusBadRequest)
	}
}

// fail answers a failed dial: 403 with the guard's reason for a refusal,
// 502 for a host that could not be reached.
func (p *Proxy) fail(w http.ResponseWriter, err error) {
	w.Header().Set("Connection", "close")
	var de *netguard.DialError
	switch {
	case errors.As(err, &de) && de.Refused:
		p.refuse(de.Msg)
		w.Header().Set("X-Scidex-Egress", "refused")
		http.Error(w, "scidex egress refused: "+de.Msg, http.StatusForbidden)
	case errors.As(err, &de):
		http.Error(w, "scidex egress: "+de.Msg, http.StatusBadGateway)
	default:
		http.Error(w, "scidex egress: the connection failed", http.StatusBadGateway)
	}
}

// connect opens a tunnel: the tool speaks TLS (or anything) end to end
// with the host the guard connected to.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	target := r.Host
	if _, port, err := net.SplitHostPort(target); err != nil || port == "" {
		http.Error(w, fmt.Sprintf("scidex egress: CONNECT %q: want host:port", target), http.StatusBadRequest)
		return
	}
	up, err := p.dial(r.Context(), "tcp", target)
	if err != nil {
		p.fail(w, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "scidex egress: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(up, down) {
		return
	}
	defer p.untrack(up, down)
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		// What the client sent after its CONNECT, already read, goes first.
		if n := buf.Reader.Buffered(); n > 0 {
			b, _ := buf.Reader.Peek(n)
			_, _ = up.Write(b)
		}
		_, _ = io.Copy(up, down)
		closeWrite(up)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(down, up)
		closeWrite(down)
		done <- struct{}{}
	}()
	<-done
	<-done
}

// track registers a tunnel's two ends so that Close can cut them; false
// (both closed) when the proxy is closing.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.tunnels[c] = true
	}
	p.draining.Add(1)
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	for _, c := range cs {
		delete(p.tunnels, c)
		_ = c.Close()
	}
	p.mu.Unlock()
	p.draining.Done()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		_ = c.Close()
	}
}

// hopHeaders are a proxy's own and never forwarded (RFC 9110 §7.6.1).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward sends a plain http:// request on and copies the answer back.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Close = false
	removeHop(out.Header)
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		p.fail(w, err)
		return
	}
	defer resp.Body.Close()
	removeHop(resp.Header)
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func removeHop(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, name := range strings.Split(f, ",") {
			h.Del(strings.TrimSpace(name))
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}
