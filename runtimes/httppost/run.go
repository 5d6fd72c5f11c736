package httppost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/scidex/substrate/internal/secrets"
	"github.com/scidex/substrate/runtimes"
)

// Run implements runtimes.Runtime: it posts the call's arguments to the
// tool's URL and returns the JSON body of a 2xx answer as the output.
func (r *Runtime) Run(ctx context.Context, c *runtimes.Call) (*runtimes.Result, error) {
	start := time.Now()
	cfg, ps := r.parseConfig(c.Tool)
	if len(ps) > 0 {
		// The same problems registration reports; at dispatch they refuse
		// the call. A secret the store lacks is the operator's to fix.
		return nil, r.done(ctx, c, nil, start, 0, 0, runtimes.Errorf(runtimes.CodeRefused, ps[0].setup, "%s: %s", ps[0].Path, ps[0].Message))
	}
	var sec *callSecret
	if cfg.SecretRef != nil {
		v, ok := r.opts.Secrets.Lookup(*cfg.SecretRef)
		if !ok {
			return nil, r.done(ctx, c, cfg, start, 0, 0, runtimes.Errorf(runtimes.CodeRefused, true, "secret %s is not in this server's secret store", *cfg.SecretRef))
		}
		sec = &callSecret{name: *cfg.SecretRef, value: v.Reveal(), match: v.Matcher()}
	}
	lim := r.deadline(c.Tool, cfg)
	ctx, cancel := context.WithTimeoutCause(ctx, lim.d, &wallTimeout{lim})
	defer cancel()
	res, status, n, err := r.post(ctx, c, cfg, lim, sec)
	if err != nil && sec != nil {
		err = sec.scrub(err, cfg.url.Host)
	}
	return res, r.done(ctx, c, cfg, start, status, n, err)
}

// callSecret is the secret a call carries: its name, its value (for the
// Authorization header and nothing else) and the matcher that finds it in
// what the tool answers.
type callSecret struct {
	name, value string
	match       *secrets.Matcher
}

// scrub is the last look at a failed call's error before it is recorded:
// every text in it may come from the tool (a Content-Type, a redirect's
// host, a certificate's names, a body excerpt), so a message or detail that
// holds the secret in any form the matcher finds is replaced, not shown.
func (s *callSecret) scrub(err error, host string) error {
	e := runtimes.AsError(err)
	if s.match.FoundIn([]byte(e.Message)) {
		e.Message = fmt.Sprintf("the tool at %s failed (%s); the error's text is not shown because it holds the call's secret %s", host, e.Code, s.name)
	}
	for k, v := range e.Details {
		if b, jerr := json.Marshal(v); jerr != nil || s.match.FoundIn(b) || s.match.FoundIn([]byte(fmt.Sprint(v))) {
			delete(e.Details, k)
		}
	}
	return e
}

// wallTimeout is the cause of the call's own deadline, which tells it from
// the caller's cancellation.
type wallTimeout struct{ l limit }

func (w *wallTimeout) Error() string { return "wall time " + w.l.d.String() }

func (r *Runtime) post(ctx context.Context, c *runtimes.Call, cfg *config, lim limit, sec *callSecret) (*runtimes.Result, int, int, error) {
	args := c.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	tr := &tracer{}
	req, err := http.NewRequestWithContext(tr.with(ctx), http.MethodPost, cfg.url.String(), bytes.NewReader(args))
	if err != nil {
		return nil, 0, 0, runtimes.Errorf(runtimes.CodeRefused, false, "cannot make a request to the tool's URL: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "scidex-http_post/1")
	if c.ID != "" {
		req.Header.Set("X-Scidex-Tool-Call", c.ID)
	}
	// The call's span, when traced, continues at the tool (W3C traceparent);
	// nothing is added for a context without one. Never baggage: it is the
	// client's, not the tool's.
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	if sec != nil {
		req.Header.Set("Authorization", "Bearer "+sec.value)
	}
	resp, err := r.transport.RoundTrip(req)
	if err != nil {
		return nil, 0, 0, r.classify(ctx, cfg, lim, tr, err)
	}
	defer resp.Body.Close()
	host := cfg.url.Host
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, resp.StatusCode, 0, redirectRefusal(cfg.url, resp)
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		return nil, resp.StatusCode, 0, r.statusError(ctx, cfg, lim, resp, sec)
	}
	if resp.ContentLength > r.opts.MaxResponseBytes {
		return nil, resp.StatusCode, 0, runtimes.Errorf(runtimes.CodeOutputTooLarge, false,
			"the tool at %s announced a %d-byte response, over the %d-byte cap", host, resp.ContentLength, r.opts.MaxResponseBytes).
			With("status", resp.StatusCode).With("limit_bytes", r.opts.MaxResponseBytes)
	}
	body, err := runtimes.ReadCapped(resp.Body, r.opts.MaxResponseBytes)
	if err != nil {
		if e, ok := err.(*runtimes.Error); ok {
			e.Message = fmt.Sprintf("the response of the tool at %s is larger than the %d-byte cap", host, r.opts.MaxResponseBytes)
			return nil, resp.StatusCode, 0, e.With("status", resp.StatusCode).With("limit_bytes", r.opts.MaxResponseBytes)
		}
		if ctx.Err() != nil {
			return nil, resp.StatusCode, len(body), r.ended(ctx, cfg, lim)
		}
		return nil, resp.StatusCode, len(body), runtimes.Errorf(runtimes.CodeToolError, false,
			"the response of the tool at %s broke off after %d bytes", host, len(body)).With("status", resp.StatusCode)
	}
	if sec != nil && sec.match.FoundIn(body) {
		// The output becomes the tool_call's result, an artifact: a tool
		// that echoes its credential, in clear, escaped or encoded, would
		// have it recorded for anyone who may read the call. None of the
		// output is kept, not even an excerpt.
		return nil, resp.StatusCode, len(body), runtimes.Errorf(runtimes.CodeSecretInOutput, false,
			"the tool at %s answered with an output that holds the call's secret %s (in clear or encoded); none of the output is recorded", host, sec.name).
			With("status", resp.StatusCode)
	}
	if !json.Valid(body) {
		return nil, resp.StatusCode, len(body), runtimes.Errorf(runtimes.CodeBadOutput, false,
			"the tool at %s answered %d with a body that is not JSON (%d bytes, Content-Type %q)", host, resp.StatusCode, len(body), mediaType(resp)).
			With("status", resp.StatusCode)
	}
	return &runtimes.Result{Output: body}, resp.StatusCode, len(body), nil
}

// statusError is a non-2xx answer: the tool's failure, with its status and
// a short, sanitised excerpt of the body (a secret it echoes is masked, and
// an excerpt near a secret in any other form is not shown at all).
func (r *Runtime) statusError(ctx context.Context, cfg *config, lim limit, resp *http.Response, sec *callSecret) error {
	ex, withheld, err := excerpt(resp.Body, sec)
	if err != nil && ctx.Err() != nil {
		return r.ended(ctx, cfg, lim)
	}
	msg := fmt.Sprintf("the tool at %s answered %s", cfg.url.Host, statusText(resp.StatusCode))
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		if sec != nil {
			msg += fmt.Sprintf(" (the call carried secret %s as a bearer token)", sec.name)
		} else {
			msg += " (the call carried no credentials: the tool may need a secret_ref)"
		}
	}
	switch {
	case withheld:
		msg += fmt.Sprintf("; its body is not shown: it holds the call's secret %s in an encoded form", sec.name)
	case ex != "":
		msg += ": " + ex
	}
	e := runtimes.Errorf(runtimes.CodeToolError, false, "%s", msg).With("status", resp.StatusCode)
	if ex != "" {
		e.With("body_excerpt", ex)
	}
	return e
}

// redirectRefusal refuses a 3xx: http_post posts to the declared URL only.
// The Location's host is named when it is plainly a host name or an address
// (never its path or query, which may carry a token).
func redirectRefusal(base *url.URL, resp *http.Response) error {
	to := "another location"
	if loc, err := base.Parse(resp.Header.Get("Location")); err == nil && resp.Header.Get("Location") != "" {
		if h := loc.Host; safeHost(h) {
			to = h
		}
	}
	return runtimes.Errorf(runtimes.CodeRefused, false,
		"the tool at %s answered %s, a redirect to %s; http_post follows no redirects (register the tool with its final URL)",
		base.Host, statusText(resp.StatusCode), to).With("status", resp.StatusCode)
}

// safeHost reports whether h looks like a host[:port] and nothing else.
func safeHost(h string) bool {
	if h == "" || len(h) > 262 {
		return false
	}
	for _, r := range h {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-:[]", r)
		if !ok {
			return false
		}
	}
	return true
}

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprintf("%d", code)
}

func mediaType(resp *http.Response) string {
	ct := resp.Header.Get("Content-Type")
	if len(ct) > 100 || !safeText(ct) {
		return "(unprintable)"
	}
	return ct
}

// done logs the call's one line and returns err. The line carries the
// tool, the host, the status, the size and the code: never a header, the
// arguments or the body.
func (r *Runtime) done(ctx context.Context, c *runtimes.Call, cfg *config, start time.Time, status, n int, err error) error {
	attrs := []slog.Attr{
		slog.String("tool", c.Tool.Name), slog.String("version", c.Tool.Version), slog.String("call", c.ID),
		slog.Int("status", status), slog.Int("bytes", n), slog.Duration("duration", time.Since(start)),
	}
	if cfg != nil {
		attrs = append(attrs, slog.String("host", cfg.url.Host))
	}
	if err == nil {
		r.log.LogAttrs(ctx, slog.LevelDebug, "http_post call", attrs...)
		return nil
	}
	e := runtimes.AsError(err)
	attrs = append(attrs, slog.String("code", e.Code), slog.Bool("setup", e.Setup), slog.String("error", e.Message))
	r.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelInfo, "http_post call failed", attrs...)
	return e
}
