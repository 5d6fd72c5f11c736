package graphiql

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultEndpoint is the GraphQL endpoint used when Options.Endpoint is empty.
const DefaultEndpoint = "/graphql"

// DefaultTitle is the page title used when Options.Title is empty.
const DefaultTitle = "SciDEX substrate — GraphiQL"

// Options configures [Handler].
type Options struct {
	// Endpoint is the path of the GraphQL-over-HTTP endpoint on the same
	// origin as the page, for example "/graphql". It must start with a single
	// "/": the Content-Security-Policy of the page lets it talk to its own
	// origin only. Empty means DefaultEndpoint.
	Endpoint string

	// SubscriptionEndpoint is the path of the graphql-transport-ws websocket
	// endpoint on the same origin, for example "/graphql". The page turns it
	// into a ws:// or wss:// URL from its own location, so it works behind
	// TLS termination. Same rules as Endpoint. Empty means Endpoint.
	SubscriptionEndpoint string

	// Title is the title of the page and of its top bar. Empty means
	// DefaultTitle.
	Title string
}

// Handler returns the handler that serves the GraphiQL page at "/" and its
// embedded assets under "/assets/". Mount it with [http.StripPrefix] (see the
// package documentation, or use [Mount]). A request for "" (the prefix
// itself, without the trailing slash) is redirected to the prefix with a
// slash, because the page refers to its assets with relative URLs.
//
// Handler panics if an endpoint in opts is not a same-origin absolute path
// (it must start with "/" but not "//"); that is a programming error, like an
// invalid pattern given to [http.ServeMux].
func Handler(opts Options) http.Handler {
	if opts.Endpoint == "" {
		opts.Endpoint = DefaultEndpoint
	}
	if opts.SubscriptionEndpoint == "" {
		opts.SubscriptionEndpoint = opts.Endpoint
	}
	if opts.Title == "" {
		opts.Title = DefaultTitle
	}
	for _, ep := range []string{opts.Endpoint, opts.SubscriptionEndpoint} {
		if err := checkEndpoint(ep); err != nil {
			panic("graphiql: " + err.Error())
		}
	}
	b, err := loadBundle()
	if err != nil {
		panic("graphiql: " + err.Error())
	}
	h := &handler{opts: opts, b: b}
	// Render once so that a broken template or a missing asset shows up at
	// start-up and not on the first request.
	if _, err := h.render("self-test"); err != nil {
		panic("graphiql: " + err.Error())
	}
	return h
}

// Mount registers the GraphiQL handler on mux under prefix (for example
// "/graphiql"): the prefix itself redirects to prefix+"/", which serves the
// page, and prefix+"/assets/..." serves the assets. A prefix of "" or "/"
// mounts the handler at the root of mux.
func Mount(mux *http.ServeMux, prefix string, opts Options) {
	prefix = strings.TrimRight(prefix, "/")
	h := Handler(opts)
	if prefix == "" {
		mux.Handle("/", h)
		return
	}
	if !strings.HasPrefix(prefix, "/") {
		panic(fmt.Sprintf("graphiql: mount prefix %q must start with /", prefix))
	}
	sh := http.StripPrefix(prefix, h)
	mux.Handle(prefix, sh)
	mux.Handle(prefix+"/", sh)
}

func checkEndpoint(ep string) error {
	if !strings.HasPrefix(ep, "/") || strings.HasPrefix(ep, "//") || strings.HasPrefix(ep, "/\\") {
		return fmt.Errorf("endpoint %q must be a path on the same origin, starting with a single /", ep)
	}
	if strings.ContainsAny(ep, "\x00\r\n\t") {
		return fmt.Errorf("endpoint %q contains a control character", ep)
	}
	return nil
}

// The vendored assets (scripts/vendor-graphiql) and our own page, script and
// style sheet.
//
//go:embed assets web
var embedded embed.FS

// pageTemplate is the name of the page template in web/; it is not served as
// an asset.
const pageTemplate = "index.html"

// bundle is everything the handler serves, read once from the embedded files.
type bundle struct {
	assets map[string]*asset // by file name
	page   *template.Template
}

type asset struct {
	name  string
	data  []byte
	ctype string
	hash  string // hex prefix of the sha256 of data; the version in the URL
	url   string // "assets/<hash>/<name>", relative to the page

	gzipOnce sync.Once
	gz       []byte // gzip of data, nil when not worth it or not compressible
}

var loadBundle = sync.OnceValues(func() (*bundle, error) {
	b := &bundle{assets: map[string]*asset{}}
	for _, dir := range []string{"assets", "web"} {
		entries, err := fs.ReadDir(embedded, dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() || (dir == "web" && e.Name() == pageTemplate) {
				continue
			}
			data, err := embedded.ReadFile(dir + "/" + e.Name())
			if err != nil {
				return nil, err
			}
			if _, dup := b.assets[e.Name()]; dup {
				return nil, fmt.Errorf("asset %s exists twice", e.Name())
			}
			sum := sha256.Sum256(data)
			a := &asset{
				name:  e.Name(),
				data:  data,
				ctype: contentType(e.Name()),
				hash:  hex.EncodeToString(sum[:8]),
			}
			a.url = "assets/" + a.hash + "/" + a.name
			b.assets[a.name] = a
		}
	}
	page, err := template.New(pageTemplate).Funcs(template.FuncMap{
		"asset": func(name string) (string, error) {
			a, ok := b.assets[name]
			if !ok {
				return "", fmt.Errorf("page refers to unknown asset %q", name)
			}
			return a.url, nil
		},
	}).ParseFS(embedded, "web/"+pageTemplate)
	if err != nil {
		return nil, err
	}
	b.page = page
	return b, nil
})

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	default: // LICENSE files and VERSIONS
		return "text/plain; charset=utf-8"
	}
}

func (a *asset) compressible() bool {
	return strings.HasPrefix(a.ctype, "text/javascript") || strings.HasPrefix(a.ctype, "text/css") || a.ctype == "image/svg+xml"
}

// gzipped returns the gzip encoding of the asset, or nil when the asset is
// not worth compressing. It is computed on first use and kept.
func (a *asset) gzipped() []byte {
	a.gzipOnce.Do(func() {
		if !a.compressible() || len(a.data) < 1024 {
			return
		}
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			return
		}
		if _, err := zw.Write(a.data); err != nil {
			return
		}
		if err := zw.Close(); err != nil {
			return
		}
		if buf.Len() < len(a.data)*9/10 {
			a.gz = buf.Bytes()
		}
	})
	return a.gz
}

type handler struct {
	opts Options
	b    *bundle
}

type pageData struct {
	Title                string
	Endpoint             string
	SubscriptionEndpoint string
	Nonce                string
}

func (h *handler) render(nonce string) ([]byte, error) {
	var buf bytes.Buffer
	err := h.b.page.Execute(&buf, pageData{
		Title:                h.opts.Title,
		Endpoint:             h.opts.Endpoint,
		SubscriptionEndpoint: h.opts.SubscriptionEndpoint,
		Nonce:                nonce,
	})
	return buf.Bytes(), err
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	switch {
	case p == "":
		h.redirectToSlash(w, r)
	case p == "/":
		h.servePage(w, r)
	case strings.HasPrefix(p, "/assets/"):
		h.serveAsset(w, r, strings.TrimPrefix(p, "/assets/"))
	default:
		http.NotFound(w, r)
	}
}

// redirectToSlash answers a request for the mount prefix without its
// trailing slash ("/graphiql" when mounted with StripPrefix("/graphiql"))
// with a relative redirect to "graphiql/". The handler sees an empty path
// then, so the last path segment comes from the original request URI.
func (h *handler) redirectToSlash(w http.ResponseWriter, r *http.Request) {
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil || u.Path == "" || strings.HasSuffix(u.Path, "/") {
		http.NotFound(w, r)
		return
	}
	// A relative reference: URL.String adds "./" when the segment holds a
	// colon, so it cannot read as a scheme.
	target := url.URL{Path: path.Base(u.Path) + "/", RawQuery: r.URL.RawQuery}
	w.Header().Set("Location", target.String())
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusMovedPermanently)
}

func (h *handler) servePage(w http.ResponseWriter, r *http.Request) {
	nonce, err := newNonce()
	if err != nil {
		http.Error(w, "cannot make a CSP nonce", http.StatusInternalServerError)
		return
	}
	body, err := h.render(nonce)
	if err != nil {
		http.Error(w, "cannot render the GraphiQL page", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", contentSecurityPolicy(nonce, r.Host))
	// The page carries a fresh nonce on every response: never reuse one.
	hd.Set("Cache-Control", "no-store")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// contentSecurityPolicy is the policy of the page: everything from 'self'
// only. The page has no inline script at all; the nonce is for the <style>
// element that GraphiQL's dialogs (react-remove-scroll) insert, which reads it
// from window.__webpack_nonce__ (set by web/scidex-graphiql.js). Fonts and
// icons are data: URLs inside graphiql.min.css. connect-src names the ws: and
// wss: URLs of the request's own host next to 'self', for browsers whose
// 'self' does not cover websockets yet.
func contentSecurityPolicy(nonce, host string) string {
	connect := "'self'"
	if validHost(host) {
		connect += " ws://" + host + " wss://" + host
	}
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self' 'nonce-" + nonce + "'",
		"img-src 'self' data:",
		"font-src 'self' data:",
		"connect-src " + connect,
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

// hostPattern accepts a DNS name, IPv4 or bracketed IPv6 address with an
// optional port: nothing that could end a CSP directive or source list.
var hostPattern = regexp.MustCompile(`^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$`)

func validHost(host string) bool {
	return len(host) <= 255 && hostPattern.MatchString(host)
}

func newNonce() (string, error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// serveAsset serves "<hash>/<name>" (the URLs the page uses; cached for a
// year, since the hash changes with the content) or "<name>" (for people and
// tools; revalidated every time). A hash that is not the current one is a
// 404: the content it named is gone.
func (h *handler) serveAsset(w http.ResponseWriter, r *http.Request, rest string) {
	hash, name, versioned := strings.Cut(rest, "/")
	if !versioned {
		name, hash = hash, ""
	}
	a, ok := h.b.assets[name]
	if !ok || (versioned && hash != a.hash) {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.ctype)
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	// Nothing inside an asset may load anything, should one be opened as
	// a document (the SVG icon, the license texts).
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	if versioned {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hd.Set("Cache-Control", "no-cache")
	}
	data, etag := a.data, `"`+a.hash+`"`
	if a.compressible() {
		hd.Add("Vary", "Accept-Encoding")
		if gz := a.gzipped(); gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
			data, etag = gz, `"`+a.hash+`-gzip"`
			hd.Set("Content-Encoding", "gzip")
		}
	}
	hd.Set("ETag", etag)
	http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(data))
}

// acceptsGzip reports whether an Accept-Encoding header value allows gzip.
func acceptsGzip(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "x-gzip" {
			continue
		}
		q := strings.ReplaceAll(strings.ToLower(params), " ", "")
		if strings.HasPrefix(q, "q=0") && strings.Trim(strings.TrimPrefix(q, "q=0"), ".0") == "" {
			return false // q=0, q=0.0, q=0.000: explicitly refused
		}
		return true
	}
	return false
}
