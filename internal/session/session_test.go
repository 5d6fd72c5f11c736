package session

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/scidex/substrate/internal/origin"
)

// Secure unless the page is plain HTTP from a loopback host; always in
// production.
func TestSecure(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8080": false, "localhost:8080": false, "[::1]:8080": false, "127.0.0.2": false, "LOCALHOST": false,
		"scidex.example": true, "10.0.0.5:8080": true, "192.168.1.2": true, "localhost.evil.example": true,
	} {
		r := httptest.NewRequest(http.MethodPost, "/auth/session", nil)
		r.Host = host
		if got := (Cookies{}).secure(r); got != want {
			t.Errorf("plain HTTP to %s: Secure %v, want %v", host, got, want)
		}
		r.TLS = &tls.ConnectionState{}
		if !(Cookies{}).secure(r) {
			t.Errorf("TLS to %s: not Secure", host)
		}
		r.TLS = nil
		if !(Cookies{AlwaysSecure: true}).secure(r) {
			t.Errorf("production, %s: not Secure", host)
		}
	}
}

func TestCheck(t *testing.T) {
	allow := origin.New([]string{"https://prism.example"})
	req := func(method, origin, site, csrfCookie, csrfHeader string) *http.Request {
		r := httptest.NewRequest(method, "http://api.example/graphql", nil)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if site != "" {
			r.Header.Set("Sec-Fetch-Site", site)
		}
		if csrfCookie != "" {
			r.AddCookie(&http.Cookie{Name: CSRFCookie, Value: csrfCookie})
		}
		if csrfHeader != "" {
			r.Header.Set(CSRFHeader, csrfHeader)
		}
		return r
	}
	for name, c := range map[string]struct {
		r    *http.Request
		want Refusal
	}{
		"GET, same origin":          {req("GET", "", "same-origin", "", ""), ""},
		"GET, navigation":           {req("GET", "", "none", "", ""), ""},
		"GET, no browser":           {req("GET", "", "", "", ""), ""},
		"GET, cross-site":           {req("GET", "", "cross-site", "", ""), CrossSite},
		"GET, same-site":            {req("GET", "", "same-site", "", ""), CrossSite},
		"POST, own origin, token":   {req("POST", "http://api.example", "same-origin", "k", "k"), ""},
		"POST, own origin, none":    {req("POST", "http://api.example", "same-origin", "k", ""), NoCSRF},
		"POST, own origin, wrong":   {req("POST", "http://api.example", "same-origin", "k", "j"), NoCSRF},
		"POST, no cookie, header":   {req("POST", "http://api.example", "same-origin", "", "k"), NoCSRF},
		"POST, listed, token":       {req("POST", "https://prism.example", "cross-site", "k", "k"), ""},
		"POST, foreign, token":      {req("POST", "https://evil.example", "cross-site", "k", "k"), CrossSite},
		"POST, null origin":         {req("POST", "null", "cross-site", "k", "k"), CrossSite},
		"DELETE, own origin, token": {req("DELETE", "http://api.example", "", "k", "k"), ""},
	} {
		if got := Check(c.r, allow); got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}

// CORS names the one listed origin with credentials, never *; others get
// nothing and reach the handler as they came.
func TestCORS(t *testing.T) {
	allow := origin.New([]string{"https://prism.example"})
	reached := 0
	h := CORS(allow, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ }))
	for _, o := range []string{"https://prism.example", "https://evil.example", "*", ""} {
		for _, preflight := range []bool{false, true} {
			r := httptest.NewRequest(http.MethodPost, "/graphql", nil)
			if preflight {
				r.Method = http.MethodOptions
				r.Header.Set("Access-Control-Request-Method", "POST")
			}
			if o != "" {
				r.Header.Set("Origin", o)
			}
			w := httptest.NewRecorder()
			before := reached
			h.ServeHTTP(w, r)
			got := w.Header().Get("Access-Control-Allow-Origin")
			listed := o == "https://prism.example"
			if listed && (got != o || w.Header().Get("Access-Control-Allow-Credentials") != "true") {
				t.Errorf("%s (preflight %v): Allow-Origin %q, credentials %q", o, preflight, got, w.Header().Get("Access-Control-Allow-Credentials"))
			}
			if !listed && got != "" {
				t.Errorf("%s (preflight %v): Allow-Origin %q", o, preflight, got)
			}
			if answered := reached == before; answered != (listed && preflight) {
				t.Errorf("%s (preflight %v): answered by CORS %v", o, preflight, answered)
			}
		}
	}
}

func TestIssueAndClear(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/auth/session", nil)
	w := httptest.NewRecorder()
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	csrf := (Cookies{}).Issue(w, r, "tok", exp)
	cs := w.Result().Cookies()
	if len(cs) != 2 || cs[0].Name != JWTCookie || cs[0].Value != "tok" || !cs[0].HttpOnly || cs[1].Name != CSRFCookie || cs[1].Value != csrf || cs[1].HttpOnly ||
		len(csrf) < 40 || !cs[0].Expires.Equal(exp) {
		t.Fatalf("issued %v (csrf %q)", w.Header().Values("Set-Cookie"), csrf)
	}
	if again := (Cookies{}).Issue(httptest.NewRecorder(), r, "tok", exp); again == csrf {
		t.Fatal("two sessions got the same CSRF token")
	}
	w = httptest.NewRecorder()
	(Cookies{}).Clear(w, r)
	for _, c := range w.Result().Cookies() {
		if c.MaxAge >= 0 || c.Value != "" {
			t.Errorf("clear: %s", c.Raw)
		}
	}
}
