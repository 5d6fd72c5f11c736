package httppost

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scidex/substrate/internal/secrets"
	"github.com/scidex/substrate/runtimes"
)

const secretValue = "s3cr3t-Tok/en<&>9f2c"

// R7: the secret is sent as a bearer token and appears nowhere else: not in
// an error's message or Details, not in an output, not in a log line, on
// any path a call can take (success, a tool error echoing the header, a 2xx
// output echoing it, a redirect carrying it, a timeout, a TLS failure).
func TestSecretOnlyOnTheWire(t *testing.T) {
	store, err := secrets.New(map[string]string{"UNITS_TOKEN": secretValue})
	if err != nil {
		t.Fatal(err)
	}
	bearer := "Bearer " + secretValue
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != bearer {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, `{"ok": true}`)
	})
	mux.HandleFunc("/echo-500", func(w http.ResponseWriter, r *http.Request) {
		// The header echoed at the start and across the excerpt's cut.
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, r.Header.Get("Authorization")+strings.Repeat(".", excerptBytes-len(bearer)-3)+r.Header.Get("Authorization"))
	})
	mux.HandleFunc("/echo-200", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"auth": r.Header.Get("Authorization")})
	})
	mux.HandleFunc("/echo-html", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "<p>"+r.Header.Get("Authorization"))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://example.test/?token="+r.Header.Get("Authorization"), http.StatusFound)
	})
	mux.HandleFunc("/forbidden", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden for "+r.Header.Get("Authorization"), http.StatusForbidden)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
	s, hp := server(t, mux)
	tlsSrv := httptest.NewTLSServer(mux)
	t.Cleanup(tlsSrv.Close)

	var logs logBuffer
	r := newRuntime(t, Options{Secrets: store, Allow: []string{hp, hostPort(t, tlsSrv.URL)}, Logger: logs.logger()})
	ref := `, "secret_ref": "UNITS_TOKEN"`
	res, e := run(t, r, toolFor(s.URL+"/ok", ref), `{}`)
	if e != nil || string(res.Output) != `{"ok": true}` {
		t.Fatalf("the tool did not get the bearer token: %v", e)
	}
	cases := []struct {
		url, extra, code string
	}{
		{s.URL + "/echo-500", ref, runtimes.CodeToolError},
		{s.URL + "/echo-200", ref, runtimes.CodeBadOutput},
		{s.URL + "/echo-html", ref, runtimes.CodeBadOutput},
		{s.URL + "/redirect", ref, runtimes.CodeRefused},
		{s.URL + "/forbidden", ref, runtimes.CodeToolError},
		{s.URL + "/slow", ref + `, "timeout_ms": 100`, runtimes.CodeWallTimeout},
		{tlsSrv.URL + "/ok", ref, runtimes.CodeUnreachable},
	}
	for _, c := range cases {
		res, e := run(t, r, toolFor(c.url, c.extra), `{}`)
		if e == nil {
			t.Errorf("%s: succeeded with %s, want %s", c.url, res.Output, c.code)
			continue
		}
		if e.Code != c.code {
			t.Errorf("%s: got %s (%s), want %s", c.url, e.Code, e.Message, c.code)
		}
		details, _ := json.Marshal(e.Details)
		for what, text := range map[string]string{"message": e.Message, "error": e.Error(), "details": string(details), "details %v": fmt.Sprintf("%v %+v", e.Details, e)} {
			if strings.Contains(text, secretValue) || strings.Contains(text, "s3cr3t") {
				t.Errorf("%s: the %s carries the secret: %s", c.url, what, text)
			}
		}
		if res != nil {
			t.Errorf("%s: an output came back with the error", c.url)
		}
	}
	_, e = run(t, r, toolFor(s.URL+"/forbidden", ref), `{}`)
	if !strings.Contains(e.Message, "UNITS_TOKEN") || !strings.Contains(e.Message, "[redacted]") {
		t.Errorf("a 403 should name the secret (not its value) and mask the echo: %s", e.Message)
	}
	out := logs.String()
	if strings.Contains(out, "s3cr3t") {
		t.Errorf("the log carries the secret:\n%s", out)
	}
	if n := strings.Count(out, `"msg":"http_post call`); n != len(cases)+2 {
		t.Errorf("%d log lines, want one per call (%d):\n%s", n, len(cases)+2, out)
	}
}

// The excerpt masks a secret wherever it falls, straddling the cut
// included, and never shows a part of it.
func TestExcerptMasksSecret(t *testing.T) {
	secret := "QQsecretQQ"
	for off := 0; off < excerptBytes+len(secret)+2; off++ {
		for _, tail := range []int{0, 5, 300} {
			body := strings.Repeat(".", off) + secret + strings.Repeat(".", tail)
			ex, err := excerpt(strings.NewReader(body), secret)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(ex, "Q") || strings.Contains(ex, "secret") {
				t.Fatalf("offset %d, tail %d: the excerpt shows part of the secret: %q", off, tail, ex)
			}
			if len(ex) > excerptBytes+len("[redacted]")+len("…") {
				t.Fatalf("offset %d: the excerpt is %d bytes", off, len(ex))
			}
		}
	}
}

// A tool whose secret the store does not hold is refused at dispatch as a
// setup failure (the operator's to fix), without a connection.
func TestMissingSecretRefused(t *testing.T) {
	tw := newTripwire(t, "tcp4", "127.0.0.1:0")
	addr := "127.0.0.1:" + tw.port()
	r := newRuntime(t, Options{Allow: []string{addr}})
	_, e := run(t, r, toolFor("http://"+addr+"/", `, "secret_ref": "GONE"`), `{}`)
	wantCode(t, e, runtimes.CodeRefused, true)
	if !strings.Contains(e.Message, "secret GONE is not in this server's secret store") {
		t.Errorf("message %q", e.Message)
	}
	tw.untouched(t)
}
