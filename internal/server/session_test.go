package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/apitest"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/server"
)

// browser is an HTTP client with a cookie jar, sending the headers a page of
// origin sends (Origin, Sec-Fetch-Site) as a browser would.
type browser struct {
	t      *testing.T
	c      *http.Client
	base   string
	origin string // "" for a request of no page
	site   string // Sec-Fetch-Site
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Jar: jar}, base: base, origin: base, site: "same-origin"}
}

func (b *browser) do(method, path string, header map[string]string, body string) (int, []byte, http.Header) {
	b.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, b.base+path, rd)
	if b.origin != "" && method != http.MethodGet {
		req.Header.Set("Origin", b.origin)
	}
	if b.site != "" {
		req.Header.Set("Sec-Fetch-Site", b.site)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, resp.Header
}

func (b *browser) graphql(query string, vars map[string]any, header map[string]string) (int, []byte) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	status, raw, _ := b.do(http.MethodPost, "/graphql", header, string(body))
	return status, raw
}

type sessionAnswer struct {
	Actor struct {
		ID, Kind    string
		Permissions []string
	}
	ExpiresAt time.Time
	CSRFToken string
}

// A page logs in with its bearer token and gets the scidex_jwt cookie
// (HttpOnly, SameSite=Lax, expiring with the token; not Secure on a
// plain-HTTP loopback server) and a CSRF token. With the cookie, reads
// work; writes work only with the CSRF token echoed; a request of another
// origin carrying the cookie (and even the CSRF token) writes nothing;
// DELETE logs out.
func TestBrowserSession(t *testing.T) {
	env := apitest.New(t)
	tok := apitest.Contributor(t, "ada")
	b := newBrowser(t, env.Server.URL)

	status, raw, hdr := b.do(http.MethodPost, "/auth/session", map[string]string{"Authorization": "Bearer " + tok}, "")
	if status != http.StatusOK {
		t.Fatalf("POST /auth/session: %d %s", status, raw)
	}
	var s sessionAnswer
	if err := json.Unmarshal(raw, &s); err != nil || s.Actor.ID != "ada" || s.CSRFToken == "" || s.ExpiresAt.IsZero() {
		t.Fatalf("POST /auth/session answered %s", raw)
	}
	var jwtCookie, csrfCookie *http.Cookie
	for _, c := range (&http.Response{Header: hdr}).Cookies() {
		switch c.Name {
		case auth.CookieName:
			jwtCookie = c
		case "scidex_csrf":
			csrfCookie = c
		}
	}
	if jwtCookie == nil || csrfCookie == nil {
		t.Fatalf("POST /auth/session set %v", hdr.Values("Set-Cookie"))
	}
	if !jwtCookie.HttpOnly || jwtCookie.SameSite != http.SameSiteLaxMode || jwtCookie.Secure || jwtCookie.Path != "/" ||
		!jwtCookie.Expires.Equal(s.ExpiresAt.Truncate(time.Second)) {
		t.Errorf("the scidex_jwt cookie: %s (want HttpOnly, SameSite=Lax, not Secure on loopback, Path=/, Expires %s)", jwtCookie.Raw, s.ExpiresAt)
	}
	if csrfCookie.HttpOnly || csrfCookie.Value != s.CSRFToken {
		t.Errorf("the scidex_csrf cookie %s: the page must read it, and it is the answer's csrfToken %q", csrfCookie.Raw, s.CSRFToken)
	}
	if strings.Contains(string(raw), tok) {
		t.Errorf("the answer repeats the token: %s", raw)
	}

	// GET /auth/session reads the session back (a page loaded later).
	if status, raw, _ := b.do(http.MethodGet, "/auth/session", nil, ""); status != http.StatusOK || !strings.Contains(string(raw), s.CSRFToken) {
		t.Errorf("GET /auth/session: %d %s", status, raw)
	}

	// A GET query with the cookie alone; a POST (any request but GET and
	// HEAD) echoes the token, even a query.
	if status, raw, _ := b.do(http.MethodGet, "/graphql?query="+url.QueryEscape(`{ me { id } }`), nil, ""); status != http.StatusOK || !strings.Contains(string(raw), `"ada"`) {
		t.Errorf("a GET query with the cookie: %d %s", status, raw)
	}
	if status, raw := b.graphql(`{ me { id } }`, nil, nil); status != http.StatusForbidden {
		t.Errorf("a POST query with the cookie and no CSRF token: %d %s", status, raw)
	}
	if status, raw := b.graphql(`{ me { id } }`, nil, map[string]string{"X-CSRF-Token": s.CSRFToken}); status != http.StatusOK || !strings.Contains(string(raw), `"ada"`) {
		t.Errorf("a POST query with the cookie and the CSRF token: %d %s", status, raw)
	}
	in := map[string]any{"in": map[string]any{"type": "hypothesis", "title": "from a page", "content": map[string]any{"target_gene": "TREM2"}}}
	before := env.Counts(t)
	// A write without the CSRF token, and with a wrong one: refused, nothing written.
	for name, h := range map[string]map[string]string{"no token": {}, "a wrong token": {"X-CSRF-Token": s.CSRFToken + "x"}} {
		status, raw := b.graphql(createMutation, in, h)
		if status != http.StatusForbidden || !strings.Contains(string(raw), "X-CSRF-Token") {
			t.Errorf("a write with the cookie and %s: %d %s", name, status, raw)
		}
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Fatalf("refused writes wrote: %v → %v", before, after)
	}
	// The page's write, echoing the token.
	if status, raw := b.graphql(createMutation, in, map[string]string{"X-CSRF-Token": s.CSRFToken}); status != http.StatusOK || !strings.Contains(string(raw), "WriteSuccess") {
		t.Fatalf("a write with the cookie and the CSRF token: %d %s", status, raw)
	}

	// Another origin's page: the browser attaches the cookie, and the attacker
	// may even know the CSRF token (cookies do not separate ports): the
	// Origin refuses it. Without Origin, Sec-Fetch-Site does.
	before = env.Counts(t)
	evil := &browser{t: t, c: b.c, base: b.base, origin: "http://evil.example", site: "cross-site"}
	for name, br := range map[string]*browser{"cross-origin": evil, "no Origin, cross-site": {t: t, c: b.c, base: b.base, site: "cross-site"},
		"same site, other port": {t: t, c: b.c, base: b.base, origin: "http://127.0.0.1:1", site: "same-site"}} {
		if status, raw := br.graphql(createMutation, in, map[string]string{"X-CSRF-Token": s.CSRFToken}); status != http.StatusForbidden {
			t.Errorf("%s write with the cookie: %d %s", name, status, raw)
		}
		if status, raw := br.graphql(`{ me { id } }`, nil, nil); status != http.StatusForbidden {
			t.Errorf("%s read with the cookie: %d %s", name, status, raw)
		}
	}
	// A foreign page can neither log its visitor in nor out.
	if status, raw, _ := evil.do(http.MethodPost, "/auth/session", map[string]string{"Authorization": "Bearer " + apitest.Contributor(t, "mallory")}, ""); status != http.StatusForbidden {
		t.Errorf("a cross-origin login: %d %s", status, raw)
	}
	if status, raw, _ := evil.do(http.MethodDelete, "/auth/session", nil, ""); status != http.StatusForbidden {
		t.Errorf("a cross-origin logout: %d %s", status, raw)
	}
	if after := env.Counts(t); !equalCounts(before, after) {
		t.Fatalf("cross-site requests wrote: %v → %v", before, after)
	}

	// Logout needs the token too, then clears both cookies.
	if status, _, _ := b.do(http.MethodDelete, "/auth/session", nil, ""); status != http.StatusForbidden {
		t.Errorf("a logout without the CSRF token: %d", status)
	}
	if status, raw, _ := b.do(http.MethodDelete, "/auth/session", map[string]string{"X-CSRF-Token": s.CSRFToken}, ""); status != http.StatusNoContent {
		t.Fatalf("DELETE /auth/session: %d %s", status, raw)
	}
	u, _ := url.Parse(env.Server.URL)
	if left := b.c.Jar.Cookies(u); len(left) != 0 {
		t.Errorf("cookies left after logout: %v", left)
	}
	if status, _, _ := b.do(http.MethodGet, "/auth/session", nil, ""); status != http.StatusUnauthorized {
		t.Errorf("GET /auth/session after logout: %d", status)
	}
}

// Bad logins say what is wrong and set no cookie.
func TestBrowserSessionRefusals(t *testing.T) {
	env := apitest.New(t)
	b := newBrowser(t, env.Server.URL)
	for name, c := range map[string]struct {
		header map[string]string
		body   string
		status int
		says   string
	}{
		"no token":      {nil, "", http.StatusBadRequest, "Authorization: Bearer"},
		"a bad token":   {map[string]string{"Authorization": "Bearer not.a.jwt"}, "", http.StatusUnauthorized, "unauthenticated"},
		"a body token":  {nil, `{"token": "not.a.jwt"}`, http.StatusUnauthorized, "unauthenticated"},
		"a broken body": {nil, `{"token":`, http.StatusBadRequest, `the body is not JSON of the form`},
		"a form post":   {map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, "token=" + apitest.Contributor(t, "ada"), http.StatusBadRequest, "no token"},
	} {
		status, raw, hdr := b.do(http.MethodPost, "/auth/session", c.header, c.body)
		if status != c.status || !strings.Contains(string(raw), c.says) || len(hdr.Values("Set-Cookie")) != 0 {
			t.Errorf("%s: %d %s %v (want %d saying %q, no cookie)", name, status, raw, hdr.Values("Set-Cookie"), c.status, c.says)
		}
	}
	// A token in a body that is JSON works (a page that keeps it in memory).
	status, raw, _ := b.do(http.MethodPost, "/auth/session", nil, `{"token": "`+apitest.Contributor(t, "ada")+`"}`)
	if status != http.StatusOK {
		t.Fatalf("a JSON body token: %d %s", status, raw)
	}
}

// A listed origin (--allowed-origins) gets CORS answers naming it, with
// credentials, never a wildcard; an unlisted one gets none. A page of the
// listed origin logs in and writes with its CSRF token.
func TestBrowserSessionFromAListedOrigin(t *testing.T) {
	const app = "https://prism.example"
	env := apitest.New(t, apitest.Opts{Server: func(o *server.Opts) { o.AllowedOrigins = []string{app} }})
	b := newBrowser(t, env.Server.URL)
	b.origin, b.site = app, "cross-site"

	pre, _ := http.NewRequest(http.MethodOptions, env.Server.URL+"/graphql", nil)
	pre.Header.Set("Origin", app)
	pre.Header.Set("Access-Control-Request-Method", "POST")
	pre.Header.Set("Access-Control-Request-Headers", "content-type,x-csrf-token")
	resp, err := http.DefaultClient.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := resp.Header
	if resp.StatusCode/100 != 2 || h.Get("Access-Control-Allow-Origin") != app || h.Get("Access-Control-Allow-Credentials") != "true" ||
		!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "x-csrf-token") {
		t.Fatalf("preflight from %s: %d %v", app, resp.StatusCode, h)
	}
	pre.Header.Set("Origin", "https://evil.example")
	resp, err = http.DefaultClient.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Fatalf("an unlisted origin's preflight is allowed: %q", v)
	}

	status, raw, hdr := b.do(http.MethodPost, "/auth/session", map[string]string{"Authorization": "Bearer " + apitest.Contributor(t, "ada")}, "")
	if status != http.StatusOK || hdr.Get("Access-Control-Allow-Origin") != app || hdr.Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("a login from %s: %d %s %v", app, status, raw, hdr)
	}
	var s sessionAnswer
	_ = json.Unmarshal(raw, &s)
	in := map[string]any{"in": map[string]any{"type": "hypothesis", "title": "from prism", "content": map[string]any{"target_gene": "APOE"}}}
	body, _ := json.Marshal(map[string]any{"query": createMutation, "variables": in})
	status, raw, hdr = b.do(http.MethodPost, "/graphql", map[string]string{"X-CSRF-Token": s.CSRFToken}, string(bytes.TrimSpace(body)))
	if status != http.StatusOK || !strings.Contains(string(raw), "WriteSuccess") || hdr.Get("Access-Control-Allow-Origin") != app {
		t.Fatalf("a write from %s: %d %s %v", app, status, raw, hdr)
	}
}
