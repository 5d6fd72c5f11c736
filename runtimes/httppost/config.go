package httppost

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/scidex/substrate/internal/secrets"
	"github.com/scidex/substrate/runtimes"
)

// config is an http_post tool's runtime_config:
//
//	{"url": "https://units.example/convert", "secret_ref": "UNITS_TOKEN", "timeout_ms": 5000}
//
// url is required; secret_ref and timeout_ms are optional; nothing else is
// accepted.
type config struct {
	URL       string  `json:"url"`
	SecretRef *string `json:"secret_ref,omitempty"`
	TimeoutMS *int64  `json:"timeout_ms,omitempty"`

	// Filled by parse: the URL parsed, its allow-list key.
	url *url.URL
	key string
}

// maxTimeoutMS bounds timeout_ms to something a duration holds (a day).
const maxTimeoutMS = 24 * 60 * 60 * 1000

// Check implements runtimes.Runtime: runtime_config is {"url", "secret_ref"?,
// "timeout_ms"?}; the URL is http or https with a host, no user:password@ and
// no #fragment, and not an IP literal the outbound guard refuses (unless
// allow-listed); secret_ref names a secret this server's store holds and
// the operator granted to this tool's name for the URL's host:port.
// Resource caps other than the wall time describe the remote tool's own
// machine, which this runtime neither sees nor limits, so they are not
// judged here.
func (r *Runtime) Check(t *runtimes.Tool) []runtimes.Problem {
	_, ps := r.parse(t)
	return ps
}

// problem is a Problem that also says whether it is the operator's to fix
// (a secret the store lacks) rather than the tool's.
type problem struct {
	runtimes.Problem
	setup bool
}

func (r *Runtime) parse(t *runtimes.Tool) (*config, []runtimes.Problem) {
	c, ps := r.parseConfig(t)
	out := make([]runtimes.Problem, len(ps))
	for i, p := range ps {
		out[i] = p.Problem
	}
	return c, out
}

func (r *Runtime) parseConfig(t *runtimes.Tool) (*config, []problem) {
	c, err := runtimes.DecodeConfig[config](t.Config)
	if err != nil {
		return nil, []problem{{Problem: runtimes.Problem{Path: "runtime_config", Constraint: "http_post_config",
			Message: fmt.Sprintf(`an http_post runtime_config is {"url": "https://…", "secret_ref": "NAME" (optional), "timeout_ms": N (optional)} and nothing else: %v`, err)}}}
	}
	var ps []problem
	if p := r.checkURL(&c); p != nil {
		ps = append(ps, *p)
	}
	if c.SecretRef != nil {
		switch {
		case !secrets.ValidName(*c.SecretRef):
			ps = append(ps, problem{Problem: runtimes.Problem{Path: "runtime_config.secret_ref", Constraint: "secret_name",
				Message: "secret_ref names a secret of the server's store: upper-case letters, digits and _, starting with a letter (SCIDEX_SECRET_<NAME> in the server's environment)"}})
		case !r.opts.Secrets.Has(*c.SecretRef):
			ps = append(ps, problem{setup: true, Problem: runtimes.Problem{Path: "runtime_config.secret_ref", Constraint: "secret_known",
				Message: fmt.Sprintf("secret %s is not in this server's secret store", *c.SecretRef)}})
		case c.url != nil && !r.opts.Secrets.Granted(*c.SecretRef, t.Name, secrets.Target(c.url)):
			ps = append(ps, problem{setup: true, Problem: runtimes.Problem{Path: "runtime_config.secret_ref", Constraint: "secret_granted",
				Message: grantMessage(*c.SecretRef, t.Name, secrets.Target(c.url))}})
		}
	}
	if c.TimeoutMS != nil && (*c.TimeoutMS <= 0 || *c.TimeoutMS > maxTimeoutMS) {
		ps = append(ps, problem{Problem: runtimes.Problem{Path: "runtime_config.timeout_ms", Constraint: "range",
			Message: fmt.Sprintf("timeout_ms is %d; want a number of milliseconds from 1 to %d", *c.TimeoutMS, maxTimeoutMS)}})
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return &c, nil
}

// grantMessage says that the operator has not granted the secret to the
// tool for the URL's host:port, and where a grant is written. It names
// neither the grants there are nor anything of the value.
func grantMessage(secret, tool, target string) string {
	if tool == "" {
		tool = "(unnamed)"
	}
	if target == "" {
		return fmt.Sprintf("secret %s is not granted to tool %s for this URL's host, which no grant can name (a grant names an ASCII host:port): the operator grants a secret to tools and hosts in the server's secrets file", secret, tool)
	}
	return fmt.Sprintf(`secret %s is not granted to tool %s for %s: the operator grants a secret to tools and hosts in the server's secrets file ("%s": {"value": …, "tools": ["%s"], "hosts": ["%s"]}), and a tool whose URL moves to another host:port loses its grant`,
		secret, tool, target, secret, tool, target)
}

// checkURL parses and judges runtime_config.url. No message quotes the URL:
// one with user:password@ in it would print the password.
func (r *Runtime) checkURL(c *config) *problem {
	bad := func(constraint, format string, args ...any) *problem {
		return &problem{Problem: runtimes.Problem{Path: "runtime_config.url", Constraint: constraint, Message: fmt.Sprintf(format, args...)}}
	}
	if c.URL == "" {
		return bad("required", "an http_post tool names the URL it is posted to in runtime_config.url")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return bad("url", "runtime_config.url is not a URL: %v", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("scheme", "runtime_config.url must be an http:// or https:// URL (its scheme is %q)", u.Scheme)
	case u.Opaque != "":
		return bad("url", "runtime_config.url must be an absolute http(s)://host/path URL")
	case u.User != nil:
		return bad("userinfo", "runtime_config.url may not carry credentials (user:password@); put the credential in the server's secret store and name it in secret_ref")
	case u.Fragment != "" || strings.Contains(c.URL, "#"):
		return bad("fragment", "runtime_config.url may not have a #fragment (it is never sent to the server)")
	case u.Hostname() == "":
		return bad("host", "runtime_config.url has no host")
	case strings.Contains(u.Hostname(), "%"):
		return bad("host", "runtime_config.url may not name an IPv6 zone")
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return bad("port", "runtime_config.url's port %s is not a number from 1 to 65535", port)
	}
	c.url = u
	c.key = canonicalHostPort(u.Hostname(), port)
	if a, err := netip.ParseAddr(u.Hostname()); err == nil && !r.allow[c.key] {
		if err := r.guard.allowedAddr(a); err != nil {
			return bad("outbound_guard", "runtime_config.url names %s, %s; http_post does not connect to it unless the operator allow-lists %s", a, describe(a), c.key)
		}
	}
	return nil
}

// limit is the deadline that bounds one call and what set it.
type limit struct {
	d     time.Duration
	field string
}

// deadline is the shortest of the server's timeout, the tool's timeout_ms
// and its wall time.
func (r *Runtime) deadline(t *runtimes.Tool, c *config) limit {
	l := limit{r.opts.Timeout, "the server's http_post timeout"}
	if c.TimeoutMS != nil {
		if d := time.Duration(*c.TimeoutMS) * time.Millisecond; d < l.d {
			l = limit{d, "runtime_config.timeout_ms"}
		}
	}
	if w := t.Caps.WallTime; w > 0 && w < l.d {
		l = limit{w, "its wall time"}
	}
	return l
}
