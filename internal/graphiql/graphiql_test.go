package graphiql

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// newServer serves the handler the way the substrate does: mounted with
// Mount under /graphiql on a ServeMux.
func newServer(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	Mount(mux, "/graphiql", opts)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, client *http.Client, u string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// noRedirect is a client that returns redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}}

// pageRefs returns the URLs of every src and href attribute of the page, and
// the nonce attribute of each script element.
func pageRefs(t *testing.T, page []byte) (refs []string, scriptNonces []string) {
	t.Helper()
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				t.Fatal(z.Err())
			}
			return refs, scriptNonces
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			hasSrc := false
			for _, a := range tok.Attr {
				switch a.Key {
				case "src", "href", "action", "poster", "data":
					refs = append(refs, a.Val)
					hasSrc = hasSrc || a.Key == "src"
				case "nonce":
					scriptNonces = append(scriptNonces, a.Val)
				case "style":
					t.Errorf("<%s> has an inline style attribute; the CSP blocks it", tok.Data)
				}
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("<%s> has an inline event handler %s; the CSP blocks it", tok.Data, a.Key)
				}
			}
			switch {
			case tok.Data == "script" && !hasSrc:
				t.Errorf("page has an inline <script>; the CSP blocks it")
			case tok.Data == "style":
				t.Errorf("page has an inline <style>; the CSP blocks it")
			}
		}
	}
}

func cspDirectives(csp string) map[string]string {
	m := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		d = strings.TrimSpace(d)
		name, value, _ := strings.Cut(d, " ")
		m[name] = value
	}
	return m
}

func TestPage(t *testing.T) {
	srv := newServer(t, Options{})
	resp, body := get(t, nil, srv.URL+"/graphiql/")

	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if v := resp.Header.Get("X-Content-Type-Options"); v != "nosniff" {
		t.Errorf("X-Content-Type-Options %q", v)
	}
	if v := resp.Header.Get("Cache-Control"); v != "no-store" {
		t.Errorf("Cache-Control %q, want no-store (the nonce changes per response)", v)
	}
	if v := resp.Header.Get("X-Frame-Options"); v != "DENY" {
		t.Errorf("X-Frame-Options %q", v)
	}

	refs, nonces := pageRefs(t, body)
	if len(nonces) != 1 || nonces[0] == "" {
		t.Fatalf("want exactly one script nonce, got %q", nonces)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	d := cspDirectives(csp)
	host := strings.TrimPrefix(srv.URL, "http://")
	want := map[string]string{
		"default-src":     "'none'",
		"script-src":      "'self'",
		"style-src":       "'self' 'nonce-" + nonces[0] + "'",
		"img-src":         "'self' data:",
		"font-src":        "'self' data:",
		"connect-src":     "'self' ws://" + host + " wss://" + host,
		"base-uri":        "'none'",
		"form-action":     "'none'",
		"frame-ancestors": "'none'",
	}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("CSP %s = %q, want %q (policy %q)", k, d[k], v, csp)
		}
	}
	if len(d) != len(want) {
		t.Errorf("CSP has %d directives, want %d: %q", len(d), len(want), csp)
	}
	// Belt and braces over the exact values above: nothing in the policy
	// opens it up, except data: for the fonts and icons that
	// graphiql.min.css inlines.
	for name, value := range d {
		for _, src := range strings.Fields(value) {
			switch src {
			case "'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", "'strict-dynamic'", "*", "http:", "https:", "ws:", "wss:", "blob:":
				t.Errorf("CSP %s allows %s", name, src)
			case "data:":
				if name != "img-src" && name != "font-src" {
					t.Errorf("CSP %s allows data:", name)
				}
			}
		}
	}

	// No CDN: nothing on the page points at another origin.
	low := strings.ToLower(string(body))
	for _, s := range []string{"http://", "https://", "//unpkg", "//cdn"} {
		if strings.Contains(low, s) {
			t.Errorf("page contains %q", s)
		}
	}
	if len(refs) < 8 {
		t.Fatalf("page refers to %d URLs, want the 7 scripts and style sheets and the icon: %q", len(refs), refs)
	}
	for _, ref := range refs {
		u, err := url.Parse(ref)
		if err != nil {
			t.Fatal(err)
		}
		if u.Scheme != "" || u.Host != "" || strings.HasPrefix(ref, "/") {
			t.Errorf("page refers to %q: want a relative URL on the same origin", ref)
		}
	}

	for _, s := range []string{
		"<title>SciDEX substrate — GraphiQL</title>",
		`data-endpoint="/graphql"`,
		`data-subscription-endpoint="/graphql"`,
		`id="scidex-token"`,
		`type="password"`,
	} {
		if !bytes.Contains(body, []byte(s)) {
			t.Errorf("page lacks %s", s)
		}
	}

	// A fresh nonce per response.
	resp2, _ := get(t, nil, srv.URL+"/graphiql/")
	if resp2.Header.Get("Content-Security-Policy") == csp {
		t.Error("two responses carry the same CSP nonce")
	}
}

func TestPageAssetsAreServed(t *testing.T) {
	srv := newServer(t, Options{})
	pageURL, _ := url.Parse(srv.URL + "/graphiql/")
	_, body := get(t, nil, pageURL.String())
	refs, _ := pageRefs(t, body)

	b, err := loadBundle()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ref := range refs {
		u := pageURL.ResolveReference(&url.URL{Path: ref})
		name := path.Base(u.Path)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			// identity encoding: compare the bytes with the embedded file
			resp, got := get(t, nil, u.String(), "Accept-Encoding", "identity")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d", u.Path, resp.StatusCode)
			}
			wantCT := map[string]string{
				".js":  "text/javascript; charset=utf-8",
				".css": "text/css; charset=utf-8",
				".svg": "image/svg+xml",
			}[path.Ext(name)]
			if ct := resp.Header.Get("Content-Type"); ct != wantCT {
				t.Errorf("Content-Type %q, want %q", ct, wantCT)
			}
			if v := resp.Header.Get("X-Content-Type-Options"); v != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", v)
			}
			if v := resp.Header.Get("Cache-Control"); v != "public, max-age=31536000, immutable" {
				t.Errorf("Cache-Control %q", v)
			}
			if ce := resp.Header.Get("Content-Encoding"); ce != "" {
				t.Errorf("Content-Encoding %q for Accept-Encoding: identity", ce)
			}
			a := b.assets[name]
			if a == nil || !bytes.Equal(got, a.data) {
				t.Fatalf("body of %s differs from the embedded file", u.Path)
			}
			sum := sha256.Sum256(got)
			if h := strings.Split(u.Path, "/")[3]; !strings.HasPrefix(hex.EncodeToString(sum[:]), h) {
				t.Errorf("URL hash %s is not a prefix of the content's sha256", h)
			}

			// The same asset, gzip-encoded when the client accepts it.
			req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
			req.Header.Set("Accept-Encoding", "gzip")
			zresp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer zresp.Body.Close()
			if !strings.Contains(zresp.Header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("Vary %q", zresp.Header.Get("Vary"))
			}
			if zresp.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(zresp.Body)
				if err != nil {
					t.Fatal(err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(plain, a.data) {
					t.Error("gunzipped body differs from the embedded file")
				}
			} else if len(a.data) > 64<<10 {
				t.Errorf("%s (%d bytes) is not served gzip-encoded", name, len(a.data))
			}

			// Revalidation with the ETag.
			resp304, _ := get(t, nil, u.String(), "Accept-Encoding", "identity", "If-None-Match", resp.Header.Get("ETag"))
			if resp304.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match: status %d, want 304", resp304.StatusCode)
			}
		})
	}
	for _, name := range []string{
		"react.production.min.js", "react-dom.production.min.js", "graphql-ws.min.js",
		"graphiql.min.js", "graphiql.min.css", "scidex-graphiql.js", "scidex-graphiql.css", "favicon.svg",
	} {
		if !seen[name] {
			t.Errorf("page does not load %s", name)
		}
	}
}

func TestEndpointIsEscaped(t *testing.T) {
	const (
		endpoint = `/graphql?a="><script>alert(1)</script>&b='x'&c=<!--`
		subs     = `/subs/{{.Title}}"onmouseover="alert(2)`
		title    = `<b>Lab</b> & "friends" {{.Nonce}}`
	)
	srv := newServer(t, Options{Endpoint: endpoint, SubscriptionEndpoint: subs, Title: title})
	_, body := get(t, nil, srv.URL+"/graphiql/")

	for _, bad := range []string{"<script>alert", "<b>Lab", `"onmouseover`, "<!--"} {
		if bytes.Contains(body, []byte(bad)) {
			t.Errorf("page contains unescaped %q", bad)
		}
	}
	// The browser reads back exactly what was configured.
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var attrs = map[string]string{}
	var titleText string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if n.Data == "title" && n.FirstChild != nil {
				titleText = n.FirstChild.Data
			}
			for _, a := range n.Attr {
				if a.Key == "data-endpoint" || a.Key == "data-subscription-endpoint" || a.Key == "onmouseover" {
					attrs[a.Key] = a.Val
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if attrs["data-endpoint"] != endpoint {
		t.Errorf("data-endpoint reads back as %q, want %q", attrs["data-endpoint"], endpoint)
	}
	if attrs["data-subscription-endpoint"] != subs {
		t.Errorf("data-subscription-endpoint reads back as %q, want %q", attrs["data-subscription-endpoint"], subs)
	}
	if _, ok := attrs["onmouseover"]; ok {
		t.Error("an endpoint broke out of its attribute")
	}
	if titleText != title {
		t.Errorf("title reads back as %q, want %q", titleText, title)
	}
}

func TestDefaults(t *testing.T) {
	srv := newServer(t, Options{Endpoint: "/api/graphql"})
	_, body := get(t, nil, srv.URL+"/graphiql/")
	for _, s := range []string{`data-endpoint="/api/graphql"`, `data-subscription-endpoint="/api/graphql"`, DefaultTitle} {
		if !bytes.Contains(body, []byte(s)) {
			t.Errorf("page lacks %s", s)
		}
	}
}

func TestBadEndpointPanics(t *testing.T) {
	for _, opts := range []Options{
		{Endpoint: "https://elsewhere.example/graphql"},
		{Endpoint: "//elsewhere.example/graphql"},
		{Endpoint: "graphql"},
		{Endpoint: "/\\elsewhere.example"},
		{SubscriptionEndpoint: "wss://elsewhere.example/graphql"},
		{Endpoint: "/graphql\n"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Handler(%+v) did not panic", opts)
				}
			}()
			Handler(opts)
		}()
	}
}

func TestMountPrefixMustBeAPath(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Mount with prefix \"graphiql\" did not panic")
		}
	}()
	Mount(http.NewServeMux(), "graphiql", Options{})
}

func TestNotFound(t *testing.T) {
	srv := newServer(t, Options{})
	b, _ := loadBundle()
	js := b.assets["graphiql.min.js"]
	for _, p := range []string{
		"/graphiql/assets/",
		"/graphiql/assets/nope.js",
		"/graphiql/assets/" + js.hash + "/nope.js",
		"/graphiql/assets/0000000000000000/graphiql.min.js", // stale or made-up hash
		"/graphiql/assets/" + js.hash + "/",
		"/graphiql/assets/" + js.hash + "/graphiql.min.js/x",
		"/graphiql/assets/index.html", // the page template is not an asset
		"/graphiql/index.html",
		"/graphiql/graphiql.min.js",
		"/graphiql/x",
	} {
		resp, _ := get(t, noRedirect, srv.URL+p)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
		if v := resp.Header.Get("X-Content-Type-Options"); v != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q", p, v)
		}
	}
}

// TestNoTraversal calls the handler directly: a ServeMux would clean the
// path (and redirect) before the handler saw it.
func TestNoTraversal(t *testing.T) {
	h := Handler(Options{})
	for _, p := range []string{"/assets/../graphiql.go", "/assets/../web/index.html", "/assets/x/../../doc.go", "/assets//graphiql.min.js", "/../doc.go"} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path = p
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, rec.Code)
		}
	}
}

func TestUnversionedAssetAndLicenses(t *testing.T) {
	srv := newServer(t, Options{})
	for _, name := range []string{"graphiql.LICENSE", "react.LICENSE", "react-dom.LICENSE", "graphql-ws.LICENSE", "VERSIONS", "graphiql.min.css"} {
		resp, body := get(t, nil, srv.URL+"/graphiql/assets/"+name)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", name, resp.StatusCode)
			continue
		}
		if v := resp.Header.Get("Cache-Control"); v != "no-cache" {
			t.Errorf("%s: Cache-Control %q, want no-cache for an unversioned URL", name, v)
		}
		if strings.HasSuffix(name, "LICENSE") {
			if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("%s: Content-Type %q", name, ct)
			}
			if !bytes.Contains(body, []byte("MIT License")) {
				t.Errorf("%s is not the MIT license text", name)
			}
		}
	}
}

func TestRedirectToSlash(t *testing.T) {
	srv := newServer(t, Options{})
	resp, _ := get(t, noRedirect, srv.URL+"/graphiql?x=1")
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "graphiql/?x=1" {
		t.Fatalf("GET /graphiql: %d Location %q, want 301 graphiql/?x=1", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := get(t, nil, srv.URL+"/graphiql")
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/graphiql/" || !bytes.Contains(body, []byte("scidex-token")) {
		t.Fatalf("following the redirect: %d at %s", resp.StatusCode, resp.Request.URL.Path)
	}

	// A deeper prefix, mounted by hand with StripPrefix.
	mux := http.NewServeMux()
	h := http.StripPrefix("/tools/graphiql", Handler(Options{}))
	mux.Handle("/tools/graphiql", h)
	mux.Handle("/tools/graphiql/", h)
	deep := httptest.NewServer(mux)
	defer deep.Close()
	resp, _ = get(t, noRedirect, deep.URL+"/tools/graphiql")
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "graphiql/" {
		t.Fatalf("GET /tools/graphiql: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body = get(t, nil, deep.URL+"/tools/graphiql")
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/tools/graphiql/" {
		t.Fatalf("following the redirect: %d at %s", resp.StatusCode, resp.Request.URL.Path)
	}
	refs, _ := pageRefs(t, body)
	for _, ref := range refs {
		u := resp.Request.URL.ResolveReference(&url.URL{Path: ref})
		if r, _ := get(t, nil, u.String()); r.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", u.Path, r.StatusCode)
		}
	}
}

func TestMountAtRoot(t *testing.T) {
	mux := http.NewServeMux()
	Mount(mux, "/", Options{})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, body := get(t, nil, srv.URL+"/")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %d", resp.StatusCode)
	}
	refs, _ := pageRefs(t, body)
	for _, ref := range refs {
		if r, _ := get(t, nil, srv.URL+"/"+ref); r.StatusCode != http.StatusOK {
			t.Errorf("GET /%s: %d", ref, r.StatusCode)
		}
	}
}

func TestMethods(t *testing.T) {
	srv := newServer(t, Options{})
	resp, err := http.Post(srv.URL+"/graphiql/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	resp, err = http.Head(srv.URL + "/graphiql/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("HEAD: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
}

func TestCSPIgnoresOddHost(t *testing.T) {
	h := Handler(Options{})
	for _, host := range []string{"evil;script-src *", "a b", "", "x'y", "[::1]:8080", "scidex.example:443"} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		d := cspDirectives(rec.Header().Get("Content-Security-Policy"))
		want := "'self'"
		if host == "[::1]:8080" || host == "scidex.example:443" {
			want = "'self' ws://" + host + " wss://" + host
		}
		if d["connect-src"] != want {
			t.Errorf("Host %q: connect-src %q, want %q", host, d["connect-src"], want)
		}
		if d["script-src"] != "'self'" {
			t.Errorf("Host %q: script-src %q", host, d["script-src"])
		}
	}
}

// TestVersions checks assets/VERSIONS, written by scripts/vendor-graphiql,
// against the embedded files: every vendored file is listed with its sha256,
// and nothing else is in assets/.
func TestVersions(t *testing.T) {
	f, err := embedded.Open("assets/VERSIONS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{"VERSIONS": true}
	pins := map[string]string{}
	line := regexp.MustCompile(`^([a-z-]+)\t([0-9]+\.[0-9]+\.[0-9]+)\t([A-Za-z0-9._-]+)\t([0-9a-f]{64})$`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") || sc.Text() == "" {
			continue
		}
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Errorf("VERSIONS: bad line %q", sc.Text())
			continue
		}
		pins[m[1]] = m[2]
		data, err := embedded.ReadFile("assets/" + m[3])
		if err != nil {
			t.Errorf("VERSIONS lists %s: %v", m[3], err)
			continue
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != m[4] {
			t.Errorf("assets/%s: sha256 %x, VERSIONS says %s", m[3], sum, m[4])
		}
		listed[m[3]] = true
	}
	entries, err := fs.ReadDir(embedded, "assets")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			t.Errorf("assets/%s is not in VERSIONS", e.Name())
		}
	}
	for pkg, major := range map[string]string{"react": "18.", "react-dom": "18.", "graphiql": "3.", "graphql-ws": "5."} {
		if !strings.HasPrefix(pins[pkg], major) {
			t.Errorf("VERSIONS pins %s at %q, want %sx", pkg, pins[pkg], major)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for in, want := range map[string]bool{
		"":                      false,
		"gzip":                  true,
		"gzip, deflate, br":     true,
		"br;q=1.0, gzip;q=0.8":  true,
		"GZIP":                  true,
		"identity":              false,
		"gzip;q=0":              false,
		"gzip; q=0.000":         false,
		"gzip;q=0.5":            true,
		"deflate, x-gzip":       true,
		"br, gzipfoo":           false,
		"*":                     false,
		"gzip;q=0, deflate;q=1": false,
	} {
		if got := acceptsGzip(in); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", in, got, want)
		}
	}
}
