package livepage

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The page and its assets are served with a policy that runs this server's
// script only; a path that names no artifact is a 404 that says so.
func TestServes(t *testing.T) {
	mux := http.NewServeMux()
	Mount(mux)
	for path, want := range map[string]struct {
		status int
		ctype  string
		has    string
	}{
		"/artifacts/hypothesis:abc":                   {200, "text/html", `src="/assets/live/live.js"`},
		"/artifacts/hypothesis:abc@sha256:" + hex64(): {200, "text/html", "<main"},
		"/assets/live/live.js":                        {200, "javascript", "EventSource"},
		"/assets/live/live.css":                       {200, "text/css", "body"},
		"/artifacts/not a ref":                        {404, "text/plain", "names no artifact"},
	} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://x"+strings.ReplaceAll(path, " ", "%20"), nil))
		if w.Code != want.status || !strings.Contains(w.Header().Get("Content-Type"), want.ctype) || !strings.Contains(w.Body.String(), want.has) {
			t.Errorf("GET %s: %d %s %.80q", path, w.Code, w.Header().Get("Content-Type"), w.Body.String())
		}
		if w.Code == 200 && !strings.Contains(w.Header().Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("GET %s: policy %q", path, w.Header().Get("Content-Security-Policy"))
		}
	}
}

func hex64() string { return strings.Repeat("ab", 32) }
