// Package session is the browser's login: the scidex_jwt cookie a page gets
// by exchanging a bearer token at POST /auth/session, and the defences a
// cookie needs because a browser attaches it to requests no page of ours
// made.
//
// A cookie-authenticated request is served only when it comes from this
// server's own pages or an origin the operator listed (Origin, or
// Sec-Fetch-Site when a browser sends no Origin); one that writes (any method
// but GET, HEAD and OPTIONS) must also echo the session's CSRF token in the
// X-CSRF-Token header: the double-submit pattern, the token being the
// scidex_csrf cookie set beside scidex_jwt, which a page of another origin
// can neither read nor set for this host. A request that sends its token in
// the Authorization header needs neither: no browser attaches one by itself.
//
// Cross-origin pages (--allowed-origins) get CORS answers naming their one
// exact origin with credentials, never a wildcard.
package session

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/scidex/substrate/internal/origin"
)

// Cookie names: the JWT (HttpOnly) and the CSRF token (readable by the page,
// which echoes it in CSRFHeader).
const (
	JWTCookie  = "scidex_jwt"
	CSRFCookie = "scidex_csrf"
	CSRFHeader = "X-CSRF-Token"
)

// Cookies are the session's cookies as one server sets them.
type Cookies struct {
	// AlwaysSecure marks the cookies Secure even on plain-HTTP loopback
	// (production mode).
	AlwaysSecure bool
}

// secure reports whether r's cookies must be Secure: always, but for a page
// served over plain HTTP from a loopback host (a developer's
// http://localhost, where a browser would drop a Secure cookie).
func (c Cookies) secure(r *http.Request) bool {
	if c.AlwaysSecure || r.TLS != nil {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// Issue sets the session cookies for token, which expires at expires, and
// returns the CSRF token the page echoes on writes.
func (c Cookies) Issue(w http.ResponseWriter, r *http.Request, token string, expires time.Time) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails (Go ≥ 1.24)
	csrf := base64.RawURLEncoding.EncodeToString(b)
	secure := c.secure(r)
	http.SetCookie(w, &http.Cookie{Name: JWTCookie, Value: token, Path: "/", Expires: expires,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
	http.SetCookie(w, &http.Cookie{Name: CSRFCookie, Value: csrf, Path: "/", Expires: expires,
		Secure: secure, SameSite: http.SameSiteLaxMode})
	return csrf
}

// Clear removes the session cookies.
func (c Cookies) Clear(w http.ResponseWriter, r *http.Request) {
	secure := c.secure(r)
	for _, name := range []string{JWTCookie, CSRFCookie} {
		http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1,
			HttpOnly: name == JWTCookie, Secure: secure, SameSite: http.SameSiteLaxMode})
	}
}

// CSRF reads r's CSRF token: its scidex_csrf cookie ("" without one).
func CSRF(r *http.Request) string {
	if c, err := r.Cookie(CSRFCookie); err == nil {
		return c.Value
	}
	return ""
}

// Refusal is why a cookie-authenticated request is not served.
type Refusal string

const (
	// CrossSite: the request comes from a page of another site.
	CrossSite Refusal = "the scidex_jwt cookie is only accepted from this server's own pages or an origin listed in --allowed-origins"
	// NoCSRF: a write without the session's CSRF token.
	NoCSRF Refusal = "a write with the scidex_jwt cookie needs the session's CSRF token in the X-CSRF-Token header " +
		"(the scidex_csrf cookie, or csrfToken from POST or GET /auth/session)"
)

// Check is the defence of a request that authenticates with the session
// cookie: "" when it may be served, else why not. Reads (GET, HEAD) need a
// same-origin or listed page, or no page at all (a navigation, curl);
// writes need that and the CSRF token echoed.
func Check(r *http.Request, allow origin.Allow) Refusal {
	if !fromOurPages(r, allow) {
		return CrossSite
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return ""
	}
	want, got := CSRF(r), r.Header.Get(CSRFHeader)
	if want == "" || subtle.ConstantTimeCompare([]byte(want), []byte(got)) != 1 {
		return NoCSRF
	}
	return ""
}

// fromOurPages reports whether a browser request comes from this server's
// pages or a listed origin, or from no page (a navigation typed in the
// address bar, a client that is not a browser).
func fromOurPages(r *http.Request, allow origin.Allow) bool {
	if r.Header.Get("Origin") != "" {
		return allow.Allowed(r)
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// CORS answers the listed cross-origin pages: the one exact origin with
// credentials, and preflights of the methods and headers the API takes. A
// page of this server, or an origin not listed, gets no CORS headers (the
// browser then keeps the answer from a foreign page).
func CORS(allow origin.Allow, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := r.Header.Get("Origin")
		if o == "" || !allow.Listed(o) {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Allow-Origin", o)
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Set("Access-Control-Expose-Headers", "X-Request-Id, Mcp-Session-Id")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, X-CSRF-Token, Last-Event-ID, "+
				"Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
