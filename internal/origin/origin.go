// Package origin decides which browser origins may use the server's
// endpoints: a request without an Origin header (curl, an SDK, a desktop
// agent), a page of the server itself, or one of the operator's allowed
// origins (--allowed-origins). The websocket upgrade and /mcp ask it the
// same question, so they cannot disagree.
package origin

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Allow is a set of allowed origins (scheme://host[:port]).
type Allow struct {
	origins []string // lower-cased, without a trailing slash
}

// New is the set of origins listed.
func New(origins []string) Allow {
	var a Allow
	for _, o := range origins {
		a.origins = append(a.origins, normalise(o))
	}
	return a
}

// Allowed reports whether r may be served: it has no Origin, or its Origin is
// this server (the Host it was sent to) or one of the allowed ones. A
// malformed or opaque ("null") Origin is refused.
func (a Allow) Allowed(r *http.Request) bool {
	values := r.Header["Origin"]
	if len(values) == 0 {
		return true
	}
	o := values[0]
	if slices.Contains(a.origins, normalise(o)) {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// Listed reports whether the origin o is one of the allowed ones (this
// server's own origin aside).
func (a Allow) Listed(o string) bool {
	return slices.Contains(a.origins, normalise(o))
}

func normalise(o string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(o), "/"))
}
