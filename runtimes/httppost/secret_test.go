package httppost

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
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
	store := grantedStore(t, "t", hp, hostPort(t, tlsSrv.URL))

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
		{s.URL + "/echo-200", ref, runtimes.CodeSecretInOutput},
		{s.URL + "/echo-html", ref, runtimes.CodeSecretInOutput},
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
	st, err := secrets.New(map[string]string{"S": secret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := st.Lookup("S")
	sec := &callSecret{name: "S", value: secret, match: v.Matcher()}
	for off := 0; off < excerptBytes+len(secret)+2; off++ {
		for _, tail := range []int{0, 5, 300} {
			body := strings.Repeat(".", off) + secret + strings.Repeat(".", tail)
			ex, withheld, err := excerpt(strings.NewReader(body), sec)
			if err != nil || withheld {
				t.Fatalf("excerpt: %v, withheld %v", err, withheld)
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

// grantedStore holds UNITS_TOKEN (secretValue), granted to tool for hosts.
func grantedStore(t *testing.T, tool string, hosts ...string) *secrets.Store {
	t.Helper()
	store, err := secrets.New(map[string]string{"UNITS_TOKEN": secretValue},
		map[string]secrets.Grant{"UNITS_TOKEN": {Tools: []string{tool}, Hosts: hosts}})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// R7: a secret_ref is refused, at Check and at Run, unless the operator
// granted the secret to this tool's name for this URL's host:port: another
// tool naming it, the granted tool moved to another port, to another name
// of the same address or to an ungranted secret, and Run refuses before any
// connection (a setup failure: the operator's to grant).
func TestSecretGrantRefused(t *testing.T) {
	tw := newTripwire(t, "tcp4", "127.0.0.1:0")
	granted := "127.0.0.1:" + tw.port()
	other := newTripwire(t, "tcp4", "127.0.0.1:0")
	st, err := secrets.New(map[string]string{"UNITS_TOKEN": secretValue, "LOOSE": secretValue + "-2"},
		map[string]secrets.Grant{"UNITS_TOKEN": {Tools: []string{"http-units"}, Hosts: []string{granted}}})
	if err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t, Options{Secrets: st, Allow: []string{granted, "127.0.0.1:" + other.port(), "localhost:" + tw.port()}})
	for _, c := range []struct{ tool, url, secret, wantHost string }{
		{"thief.exfil", "http://" + granted + "/convert", "UNITS_TOKEN", granted},
		{"http-units", "http://127.0.0.1:" + other.port() + "/convert", "UNITS_TOKEN", "127.0.0.1:" + other.port()},
		{"http-units", "http://localhost:" + tw.port() + "/convert", "UNITS_TOKEN", "localhost:" + tw.port()},
		{"http-units", "http://" + granted + "/convert", "LOOSE", granted},
	} {
		tool := &runtimes.Tool{Name: c.tool, Version: "1.0.0", Runtime: Name,
			Config: json.RawMessage(fmt.Sprintf(`{"url": %q, "secret_ref": %q}`, c.url, c.secret))}
		ps := r.Check(tool)
		if len(ps) != 1 || ps[0].Path != "runtime_config.secret_ref" || ps[0].Constraint != "secret_granted" {
			t.Fatalf("Check(%s, %s, %s) = %+v, want one secret_granted problem", c.tool, c.url, c.secret, ps)
		}
		for _, want := range []string{"secret " + c.secret, "tool " + c.tool, c.wantHost, "secrets file"} {
			if !strings.Contains(ps[0].Message, want) {
				t.Errorf("the problem %q does not say %q", ps[0].Message, want)
			}
		}
		_, e := run(t, r, tool, `{}`)
		wantCode(t, e, runtimes.CodeRefused, true)
		if !strings.Contains(e.Message, "not granted") || strings.Contains(e.Message, "s3cr3t") {
			t.Errorf("Run's refusal: %s", e.Message)
		}
	}
	tw.untouched(t)
	other.untouched(t)
	// The granted pair checks.
	ok := &runtimes.Tool{Name: "http-units", Runtime: Name, Config: json.RawMessage(`{"url": "http://` + granted + `/convert", "secret_ref": "UNITS_TOKEN"}`)}
	if ps := r.Check(ok); len(ps) != 0 {
		t.Errorf("the granted tool is refused: %+v", ps)
	}
}

// R7: a tool server that echoes the secret in any usual encoding, in a 2xx
// JSON answer, fails the call with secret_in_output and no output; in an
// error body, the excerpt is withheld; in a Content-Type or a redirect's
// host, the message is replaced. Nothing the call returns holds the secret
// in any form the matcher knows.
func TestSecretEchoRefused(t *testing.T) {
	echo := map[string]func(string) string{
		"json \\u": func(s string) string {
			var b strings.Builder
			for _, r := range s {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			return b.String()
		},
		"base64":     func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"base64 url": func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
		"hex":        func(s string) string { return hex.EncodeToString([]byte(s)) },
		"HEX":        func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) },
		"query":      url.QueryEscape,
		"path":       url.PathEscape,
	}
	mux := http.NewServeMux()
	token := func(r *http.Request) string { return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") }
	mux.HandleFunc("/ok/{enc}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"note": "`+echo[r.PathValue("enc")](token(r))+`"}`)
	})
	mux.HandleFunc("/err/{enc}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "upstream said: "+echo[r.PathValue("enc")](token(r)))
	})
	mux.HandleFunc("/ctype", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/x-"+hex.EncodeToString([]byte(token(r))))
		_, _ = io.WriteString(w, "not json")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://"+hex.EncodeToString([]byte(token(r)))+".example/")
		w.WriteHeader(http.StatusFound)
	})
	s, hp := server(t, mux)
	r := newRuntime(t, Options{Secrets: grantedStore(t, "t", hp), Allow: []string{hp}})
	ref := `, "secret_ref": "UNITS_TOKEN"`
	st := grantedStore(t, "t", hp)
	v, _ := st.Lookup("UNITS_TOKEN")
	m := v.Matcher()
	leaks := func(what string, res *runtimes.Result, e *runtimes.Error) {
		t.Helper()
		if res != nil {
			t.Errorf("%s: an output came back: %s", what, res.Output)
		}
		d, _ := json.Marshal(e.Details)
		for _, text := range []string{e.Message, string(d)} {
			if m.FoundIn([]byte(text)) {
				t.Errorf("%s: the error holds the secret: %s", what, text)
			}
		}
	}
	for name := range echo {
		res, e := run(t, r, toolFor(s.URL+"/ok/"+url.PathEscape(name), ref), `{}`)
		wantCode(t, e, runtimes.CodeSecretInOutput, false)
		if !strings.Contains(e.Message, "UNITS_TOKEN") {
			t.Errorf("%s: the refusal does not name the secret: %s", name, e.Message)
		}
		leaks(name, res, e)

		res, e = run(t, r, toolFor(s.URL+"/err/"+url.PathEscape(name), ref), `{}`)
		wantCode(t, e, runtimes.CodeToolError, false)
		if _, shown := e.Details["body_excerpt"]; shown || !strings.Contains(e.Message, "not shown") {
			t.Errorf("%s: an error body holding the secret is shown: %s %v", name, e.Message, e.Details)
		}
		leaks(name+" error body", res, e)
	}
	res, e := run(t, r, toolFor(s.URL+"/ctype", ref), `{}`)
	wantCode(t, e, runtimes.CodeBadOutput, false)
	leaks("content-type", res, e)
	res, e = run(t, r, toolFor(s.URL+"/redirect", ref), `{}`)
	wantCode(t, e, runtimes.CodeRefused, false)
	leaks("redirect", res, e)
	// An error body that holds no secret is still shown.
	mux.HandleFunc("/plain-error", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such unit: furlong", http.StatusBadRequest)
	})
	_, e = run(t, r, toolFor(s.URL+"/plain-error", ref), `{}`)
	if e == nil || !strings.Contains(e.Message, "no such unit: furlong") {
		t.Errorf("a plain error body: %+v", e)
	}
}
