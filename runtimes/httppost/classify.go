package httppost

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/scidex/substrate/runtimes"
)

// stage is how far a request got, from the trace: it tells a TLS failure
// from a server that took the request and never answered.
type stage int32

const (
	stageConnecting stage = iota
	stageTLS
	stageSending    // connected (or a pooled connection), writing the request
	stageAwaiting   // request written, waiting for the response headers
	stageResponding // the first response byte came
)

type tracer struct{ s atomic.Int32 }

func (t *tracer) set(s stage) { t.s.Store(int32(s)) }
func (t *tracer) get() stage  { return stage(t.s.Load()) }
func (t *tracer) with(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		TLSHandshakeStart:    func() { t.set(stageTLS) },
		GotConn:              func(httptrace.GotConnInfo) { t.set(stageSending) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { t.set(stageAwaiting) },
		GotFirstResponseByte: func() { t.set(stageResponding) },
	})
}

// classify turns the client's error into the call's *runtimes.Error: the
// call's end first (wall time, cancellation), then the guard's refusal or
// an unreachable host, then a TLS failure, then a server that took the
// request and sent nothing in time, then anything else the tool did wrong.
// The client's own message is never passed on whole: it quotes the URL,
// and that is the runtime's to word.
func (r *Runtime) classify(ctx context.Context, cfg *config, lim limit, tr *tracer, err error) error {
	if ctx.Err() != nil {
		return r.ended(ctx, cfg, lim)
	}
	host := cfg.url.Host
	var de *dialError
	if errors.As(err, &de) {
		if de.refused {
			return runtimes.Errorf(runtimes.CodeRefused, false, "%s", de.msg)
		}
		return runtimes.Errorf(runtimes.CodeUnreachable, true, "%s", de.msg)
	}
	var (
		ne       net.Error
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		alert    tls.AlertError
		record   tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &verify), errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &alert), errors.As(err, &record), tr.get() == stageTLS:
		e := runtimes.Errorf(runtimes.CodeUnreachable, true, "the TLS handshake with %s failed", host)
		if m := tlsReason(err); m != "" {
			e.Message += ": " + m
		}
		return e
	case errors.As(err, &ne) && ne.Timeout() && tr.get() >= stageAwaiting:
		return runtimes.Errorf(runtimes.CodeWallTimeout, false,
			"the tool at %s took the request and sent no response within %s", host, r.opts.HeaderTimeout).
			With("timeout", "response_headers").With("limit_ms", r.opts.HeaderTimeout.Milliseconds())
	case tr.get() < stageSending:
		return runtimes.Errorf(runtimes.CodeUnreachable, true, "could not reach the tool at %s", host)
	default:
		return runtimes.Errorf(runtimes.CodeToolError, false, "the tool at %s closed the connection without a valid HTTP response", host)
	}
}

// tlsReason is the certificate's complaint, which names certificates and
// hosts, never anything of the request.
func tlsReason(err error) string {
	var verify *tls.CertificateVerificationError
	if errors.As(err, &verify) && verify.Err != nil {
		return verify.Err.Error()
	}
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknown):
		return unknown.Error()
	case errors.As(err, &hostname):
		return hostname.Error()
	case errors.As(err, &invalid):
		return invalid.Error()
	}
	return ""
}

// ended is the error of a call whose context ended: its own deadline is a
// wall timeout naming the limit that set it; the caller's deadline is one
// too; anything else is a cancellation.
func (r *Runtime) ended(ctx context.Context, cfg *config, lim limit) error {
	var wt *wallTimeout
	switch {
	case errors.As(context.Cause(ctx), &wt):
		return runtimes.Errorf(runtimes.CodeWallTimeout, false, "the tool at %s did not answer within %s (%s)", cfg.url.Host, lim.d, lim.field).
			With("limit_ms", lim.d.Milliseconds())
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return runtimes.Errorf(runtimes.CodeWallTimeout, false, "the tool at %s did not answer before the call's deadline", cfg.url.Host)
	default:
		return runtimes.Errorf(runtimes.CodeCancelled, false, "the call was cancelled")
	}
}
