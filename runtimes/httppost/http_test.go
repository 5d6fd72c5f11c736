package httppost

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scidex/substrate/runtimes"
)

// R7: a redirect is refused, whatever it points at: to a loopback address
// from an allow-listed server (no connection reaches it), and to the same
// allow-listed server (its target is never requested). The refusal names
// the Location's host, never its path or query.
func TestRedirectsRefused(t *testing.T) {
	tw := newTripwire(t, "tcp4", "127.0.0.1:0")
	var targetHits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/to-loopback", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+tw.port()+"/admin?token=tok-in-query", http.StatusFound)
	})
	mux.HandleFunc("/to-self", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/to-metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/to-junk", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://%zz/")
		w.WriteHeader(http.StatusSeeOther)
	})
	mux.HandleFunc("/to-userinfo", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://admin:pw-in-location@example.test/", http.StatusFound)
	})
	mux.HandleFunc("/target", func(w http.ResponseWriter, r *http.Request) {
		targetHits.Add(1)
		_, _ = w.Write([]byte(`{}`))
	})
	s, hp := server(t, mux)
	r := newRuntime(t, Options{Allow: []string{hp}})
	for path, to := range map[string]string{
		"/to-loopback": "127.0.0.1:" + tw.port(), "/to-self": hp, "/to-metadata": "169.254.169.254", "/to-junk": "another location", "/to-userinfo": "example.test",
	} {
		_, e := run(t, r, toolFor(s.URL+path, ""), `{}`)
		wantCode(t, e, runtimes.CodeRefused, false)
		if !strings.Contains(e.Message, "redirect to "+to+";") {
			t.Errorf("%s: the refusal does not name %s: %s", path, to, e.Message)
		}
		if strings.Contains(e.Message, "token") || strings.Contains(e.Message, "admin") || strings.Contains(e.Message, "meta-data") || strings.Contains(e.Message, "pw-in") {
			t.Errorf("%s: the refusal shows the Location's path or query: %s", path, e.Message)
		}
	}
	if n := targetHits.Load(); n != 0 {
		t.Errorf("the redirect target was requested %d times", n)
	}
	tw.untouched(t)
}

// R7: a response past the cap is cut, whether it announces its length or
// streams it; one under the cap passes.
func TestResponseCap(t *testing.T) {
	twoMiB := `"` + strings.Repeat("x", 2<<20) + `"`
	mux := http.NewServeMux()
	mux.HandleFunc("/sized", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(twoMiB)))
		_, _ = io.WriteString(w, twoMiB)
	})
	mux.HandleFunc("/streamed", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 2<<10; i++ {
			if _, err := io.WriteString(w, strings.Repeat(" ", 1<<10)); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		_, _ = io.WriteString(w, `{}`)
	})
	s, hp := server(t, mux)
	small := newRuntime(t, Options{Allow: []string{hp}, MaxResponseBytes: 1 << 20})
	for _, path := range []string{"/sized", "/streamed"} {
		res, e := run(t, small, toolFor(s.URL+path, ""), `{}`)
		wantCode(t, e, runtimes.CodeOutputTooLarge, false)
		if res != nil {
			t.Errorf("%s: a result came back with the error", path)
		}
		if e.Details["limit_bytes"] != int64(1<<20) {
			t.Errorf("%s: Details %v, want limit_bytes %d", path, e.Details, 1<<20)
		}
	}
	// The default cap (what a tool_call can hold) cuts it too.
	def := newRuntime(t, Options{Allow: []string{hp}})
	res, e := run(t, def, toolFor(s.URL+"/sized", ""), `{}`)
	if e == nil || e.Code != runtimes.CodeOutputTooLarge || res != nil {
		t.Fatalf("a 2 MiB response under the default %d-byte cap: %v", runtimes.MaxOutputBytes, e)
	}
}

// R7: a server that accepts the connection, reads the request and never
// answers is cut by the header timeout; one that sends headers and then
// stalls is cut by timeout_ms.
func TestServerThatNeverAnswers(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold); _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				go func() { _, _ = io.Copy(io.Discard, c) }()
				<-hold
			}()
		}
	}()
	r := newRuntime(t, Options{Allow: []string{l.Addr().String()}, HeaderTimeout: 200 * time.Millisecond})
	_, e := run(t, r, toolFor("http://"+l.Addr().String()+"/", ""), `{}`)
	wantCode(t, e, runtimes.CodeWallTimeout, false)
	if e.Details["timeout"] != "response_headers" {
		t.Errorf("Details %v, want timeout response_headers", e.Details)
	}

	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	s, hp := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"partial": `)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stall:
		}
	}))
	r2 := newRuntime(t, Options{Allow: []string{hp}})
	_, e = run(t, r2, toolFor(s.URL, `, "timeout_ms": 200`), `{}`)
	wantCode(t, e, runtimes.CodeWallTimeout, false)
	if !strings.Contains(e.Message, "timeout_ms") || e.Details["limit_ms"] != int64(200) {
		t.Errorf("the timeout does not name runtime_config.timeout_ms: %s %v", e.Message, e.Details)
	}
}

// An unreachable tool is a setup failure: a closed port, a name that does
// not resolve (and the resolver's own words, which name its servers, are
// not passed on).
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	_ = l.Close()
	r := newRuntime(t, Options{Allow: []string{closed}, Resolver: fakeResolver{}})
	_, e := run(t, r, toolFor("http://"+closed+"/", ""), `{}`)
	wantCode(t, e, runtimes.CodeUnreachable, true)
	if !strings.Contains(e.Message, "connection refused") {
		t.Errorf("message %q does not say the connection was refused", e.Message)
	}
	_, e = run(t, r, toolFor("http://nowhere.invalid/", ""), `{}`)
	wantCode(t, e, runtimes.CodeUnreachable, true)
	if !strings.Contains(e.Message, "does not resolve") || strings.Contains(e.Message, "10.9.9.9") {
		t.Errorf("message %q", e.Message)
	}
}

// A non-2xx answer is the tool's failure, with its status and a short,
// sanitised excerpt; a 2xx body that is not JSON is bad output.
func TestStatusAndBody(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = io.WriteString(w, "unknown unit \"furlong\"\x00\x1b[31m\n\n"+strings.Repeat("detail ", 100))
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>hello</html>")
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Scidex-Tool-Call") != "test-call" {
			http.Error(w, "bad request shape", http.StatusBadRequest)
			return
		}
		_, _ = io.Copy(w, r.Body)
	})
	s, hp := server(t, mux)
	r := newRuntime(t, Options{Allow: []string{hp}})

	_, e := run(t, r, toolFor(s.URL+"/fail", ""), `{}`)
	wantCode(t, e, runtimes.CodeToolError, false)
	ex, _ := e.Details["body_excerpt"].(string)
	if e.Details["status"] != 422 || !strings.HasPrefix(ex, `unknown unit "furlong"`) || len(ex) > excerptBytes+len("…") || strings.ContainsAny(ex, "\x00\x1b\n") {
		t.Errorf("Details %q, want status 422 and a short clean excerpt", e.Details)
	}
	if !strings.Contains(e.Message, "422 Unprocessable Entity") {
		t.Errorf("message %q does not carry the status", e.Message)
	}
	for _, path := range []string{"/html", "/empty"} {
		_, e = run(t, r, toolFor(s.URL+path, ""), `{}`)
		wantCode(t, e, runtimes.CodeBadOutput, false)
	}
	res, e := run(t, r, toolFor(s.URL+"/echo", ""), `{"x": [1, 2]}`)
	if e != nil || string(res.Output) != `{"x": [1, 2]}` {
		t.Fatalf("echo: %v %v, want the body verbatim", res, e)
	}
}

// An https tool works with the authority the operator trusts, and one
// whose certificate is not trusted is unreachable.
func TestHTTPS(t *testing.T) {
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(w, r.Body) }))
	t.Cleanup(s.Close)
	hp := hostPort(t, s.URL)
	trusted := newRuntime(t, Options{Allow: []string{hp}, RootCAs: s.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
	if _, e := run(t, trusted, toolFor(s.URL, ""), `{"a": 1}`); e != nil {
		t.Fatalf("https with a trusted certificate: %v", e)
	}
	untrusted := newRuntime(t, Options{Allow: []string{hp}})
	_, e := run(t, untrusted, toolFor(s.URL, ""), `{"a": 1}`)
	wantCode(t, e, runtimes.CodeUnreachable, true)
	if !strings.Contains(e.Message, "TLS") {
		t.Errorf("message %q does not say the handshake failed", e.Message)
	}
}

// One Runtime pools its connections: sequential calls to one server share
// one connection.
func TestConnectionsPooled(t *testing.T) {
	var conns atomic.Int32
	s, hp := serverWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(w, r.Body) }),
		func(s *http.Server) {
			s.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateNew {
					conns.Add(1)
				}
			}
		})
	r := newRuntime(t, Options{Allow: []string{hp}})
	for i := range 10 {
		if _, e := run(t, r, toolFor(s.URL, ""), fmt.Sprintf(`{"i": %d}`, i)); e != nil {
			t.Fatal(e)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("10 sequential calls opened %d connections, want 1", n)
	}
}

// runtime_config is checked field by field, each problem at its path; no
// message quotes a URL's credentials.
func TestCheckConfig(t *testing.T) {
	r := newRuntime(t, Options{})
	for _, c := range []struct{ cfg, path, constraint string }{
		{`{}`, "runtime_config.url", "required"},
		{`[1]`, "runtime_config", "http_post_config"},
		{`{"url": "http://a.example/"} {}`, "runtime_config", "http_post_config"},
		{`{"url": "http://a.example/", "auth": {"secret_ref": "X"}}`, "runtime_config", "http_post_config"},
		{`{"url": "http://a.example/", "headers": {}}`, "runtime_config", "http_post_config"},
		{`{"url": "ftp://a.example/"}`, "runtime_config.url", "scheme"},
		{`{"url": "file:///etc/passwd"}`, "runtime_config.url", "scheme"},
		{`{"url": "/relative"}`, "runtime_config.url", "scheme"},
		{`{"url": "http://user:hunter2@a.example/"}`, "runtime_config.url", "userinfo"},
		{`{"url": "http://a.example/#frag"}`, "runtime_config.url", "fragment"},
		{`{"url": "http://a.example/#"}`, "runtime_config.url", "fragment"},
		{`{"url": "http:///path"}`, "runtime_config.url", "host"},
		{`{"url": "http://a.example:0/"}`, "runtime_config.url", "port"},
		{`{"url": "http://a.example:99999/"}`, "runtime_config.url", "port"},
		{`{"url": "http://a.example/", "secret_ref": "nope"}`, "runtime_config.secret_ref", "secret_name"},
		{`{"url": "http://a.example/", "secret_ref": ""}`, "runtime_config.secret_ref", "secret_name"},
		{`{"url": "http://a.example/", "secret_ref": "MISSING"}`, "runtime_config.secret_ref", "secret_known"},
		{`{"url": "http://a.example/", "timeout_ms": 0}`, "runtime_config.timeout_ms", "range"},
		{`{"url": "http://a.example/", "timeout_ms": -5}`, "runtime_config.timeout_ms", "range"},
		{`{"url": "http://169.254.169.254/"}`, "runtime_config.url", "outbound_guard"},
	} {
		tl := &runtimes.Tool{Name: "t", Runtime: Name, Config: json.RawMessage(c.cfg)}
		ps := r.Check(tl)
		if len(ps) != 1 || ps[0].Path != c.path || ps[0].Constraint != c.constraint {
			t.Errorf("Check(%s) = %+v, want one %s problem at %s", c.cfg, ps, c.constraint, c.path)
			continue
		}
		if strings.Contains(ps[0].Message, "hunter2") {
			t.Errorf("Check(%s) quotes the password: %s", c.cfg, ps[0].Message)
		}
		_, e := run(t, r, tl, `{}`)
		wantCode(t, e, runtimes.CodeRefused, c.constraint == "secret_known")
	}
	ps := r.Check(&runtimes.Tool{Config: json.RawMessage(`{"url": "http://a.example/", "secret_ref": "MISSING"}`)})
	if len(ps) != 1 || ps[0].Message != "secret MISSING is not in this server's secret store" {
		t.Errorf("a missing secret: %+v", ps)
	}
	for _, ok := range []string{`{"url": "https://a.example/x?y=1"}`, `{"url": "http://a.example:8080/", "timeout_ms": 5000}`, `{"url": "http://[2606:4700::1111]/"}`} {
		if ps := r.Check(&runtimes.Tool{Config: json.RawMessage(ok)}); len(ps) != 0 {
			t.Errorf("Check(%s) = %+v, want none", ok, ps)
		}
	}
}
